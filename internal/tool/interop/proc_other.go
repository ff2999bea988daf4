//go:build !linux

package interop

import "syscall"

// sysProcAttr keeps a peer in the test binary's process group: without a
// parent-death signal outside Linux, the test's cleanup kills the peer, and
// an interrupt from the terminal reaches it together with the tests.
func sysProcAttr() *syscall.SysProcAttr { return nil }
