//go:build unix

package zkserver

import (
	"os"
	"syscall"
)

// terminate asks a server to shut down with SIGTERM, resuming it first in
// case it is paused, so it can act on the signal.
func terminate(p *os.Process) error {
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	_ = p.Signal(syscall.SIGCONT)
	return nil
}

// kill ends a server at once.
func kill(p *os.Process) error { return p.Kill() }

// suspend stops (SIGSTOP) or continues (SIGCONT) a server.
func suspend(p *os.Process, stop bool) error {
	if stop {
		return p.Signal(syscall.SIGSTOP)
	}
	return p.Signal(syscall.SIGCONT)
}
