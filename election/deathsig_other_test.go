//go:build !linux

package election_test

import "os/exec"

// dieWithParent has no kernel support here; the test's cleanup kills the
// helper.
func dieWithParent(*exec.Cmd) {}
