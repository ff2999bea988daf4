package cli

import (
	"errors"
	"fmt"
)

// Exit codes of the zkcoord programs.
const (
	ExitOK      = 0
	ExitFailure = 1 // cannot connect, an operation failed, a child could not be kept running
	ExitUsage   = 2 // bad flags or arguments
	ExitLost    = 3 // the lock or leadership was lost
)

// ExitError ends a program with a given exit code. A nil Err exits
// silently (used to pass on a child's exit status).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Usagef reports a usage error: exit code 2, with a hint to the help.
func Usagef(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Lostf reports the loss of a lock or leadership: exit code 3.
func Lostf(format string, args ...any) error {
	return &ExitError{Code: ExitLost, Err: fmt.Errorf(format, args...)}
}

// ExitStatus passes a child's exit status on, silently.
func ExitStatus(code int) error {
	if code == 0 {
		return nil
	}
	return &ExitError{Code: code}
}

// ExitCode maps the error a command returned to the process exit code.
func ExitCode(err error) int {
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	}
	return ExitFailure
}
