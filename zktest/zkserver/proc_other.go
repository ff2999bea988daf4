//go:build !linux

package zkserver

import "syscall"

// sysProcAttr keeps a server in the program's process group: without a
// parent-death signal outside Linux, Cluster.Close (and the test cleanup
// that calls it) kills the servers, and an interrupt from the terminal
// reaches them together with the program.
func sysProcAttr() *syscall.SysProcAttr { return nil }
