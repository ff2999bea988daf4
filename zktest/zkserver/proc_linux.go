package zkserver

import "syscall"

// sysProcAttr makes the kernel kill a server when the thread that started
// it exits (see launcher), so servers die with the program even when it is
// killed without a chance to clean up.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
