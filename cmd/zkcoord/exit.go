package main

import (
	"errors"
	"fmt"
)

// Exit codes of the command (see the package documentation).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitLost    = 3
)

// exitError ends the command with a given exit code. A nil err exits
// silently (used to pass on a child's exit status).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usagef reports a usage error: exit code 2, with a hint to the help.
func usagef(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// lostf reports the loss of a lock or leadership: exit code 3.
func lostf(format string, args ...any) error {
	return &exitError{code: exitLost, err: fmt.Errorf(format, args...)}
}

// exitStatus passes a child's exit status on, silently.
func exitStatus(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code}
}

// exitCode maps the error a command returned to the process exit code.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	}
	return exitFailure
}
