package interop

import "syscall"

// sysProcAttr makes the kernel kill a peer when the test binary dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
