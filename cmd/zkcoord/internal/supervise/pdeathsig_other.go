//go:build unix && !linux

package supervise

import "os/exec"

// startWithPdeathsig starts cmd without a shim. The system has no
// parent-death signal: brokenEnv=pdeathsig only drops the shim here.
func startWithPdeathsig(cmd *exec.Cmd) error { return cmd.Start() }
