//go:build unix

package launch

import "syscall"

// sigTerm asks a process to exit.
const sigTerm = syscall.SIGTERM

// canTerminate: Unix can ask a process to exit.
const canTerminate = true

// Pause stops the process with SIGSTOP. The signal is asynchronous: the
// process may run briefly after Pause returns (see [Proc.Paused]).
func (p *Proc) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (p *Proc) Resume() error { return p.signal(syscall.SIGCONT) }
