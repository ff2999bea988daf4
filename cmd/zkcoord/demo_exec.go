//go:build !demo

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// setUpDemo makes cmd run zkcoord-demo, which parses the command line and
// shows the help.
func setUpDemo(a *app, cmd *cobra.Command) {
	cmd.DisableFlagParsing = true
	cmd.RunE = func(_ *cobra.Command, args []string) error { return runDemo(a, args) }
}

// runDemo runs "zkcoord-demo demo ARGS", found next to this program or on
// the PATH, and passes its exit status on.
func runDemo(a *app, args []string) error {
	path, err := findDemo()
	if err != nil {
		return err
	}
	c := exec.CommandContext(a.ctx, path, append([]string{"demo"}, args...)...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, a.stdout, a.stderr
	// An interrupt from the terminal reaches both programs; SIGTERM to
	// zkcoord alone is passed on, and the demo cleans up as usual.
	c.Cancel = func() error {
		if err := c.Process.Signal(syscall.SIGTERM); err != nil {
			return c.Process.Kill()
		}
		return nil
	}
	c.WaitDelay = time.Minute
	err = c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return exitStatus(ee.ExitCode())
	}
	if errors.Is(a.ctx.Err(), context.Canceled) {
		return nil
	}
	return fmt.Errorf("running %s: %w", path, err)
}

// findDemo finds zkcoord-demo next to this program, or else on the PATH.
func findDemo() (string, error) {
	name := demoProgram
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	self, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the demo is played by %s, which is neither next to %s nor on the PATH: "+
		"build both with 'make demo' (or go build -tags demo -o %s ./cmd/zkcoord)", name, self, name)
}
