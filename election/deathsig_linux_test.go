package election_test

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd when the test binary dies, so
// that a killed test run leaves no candidate behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
