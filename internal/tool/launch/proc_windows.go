package launch

import (
	"errors"
	"os"
	"syscall"
)

// errUnsupported is returned where Windows lacks the primitive.
var errUnsupported = errors.New("launch: not supported on Windows")

// sysProcAttr: Windows has no parent-death signal; a child is cleaned up by
// [Group.Close] and by the context given to [Start].
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// sigTerm is never sent: canTerminate is false.
var sigTerm os.Signal = os.Kill

// canTerminate: Windows has no signal that asks a process to exit, so
// Terminate kills at once.
const canTerminate = false

// Pause is not supported on Windows.
func (p *Proc) Pause() error { return errUnsupported }

// Resume is not supported on Windows.
func (p *Proc) Resume() error { return errUnsupported }

// Paused reports false: Windows processes are not paused by signals.
func (p *Proc) Paused() bool { return false }
