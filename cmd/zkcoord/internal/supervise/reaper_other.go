//go:build unix && !linux

package supervise

import "syscall"

// adoptOrphans does nothing: the system has no child subreapers, so the
// orphans of the command's tree go to init, out of the shim's reach.
func adoptOrphans() {}

// proc is a process below the shim; there is none descendants can find.
type proc struct{}

// descendants finds no process: without a subreaper an orphan is out of
// reach, and the shim does its work on the command's process group alone.
func descendants() []proc { return nil }

func (proc) signal(syscall.Signal) {}
