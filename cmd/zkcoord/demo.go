package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// demoProgram plays the demo: a program of its own (cmd/zkcoord-demo), so
// that zkcoord links neither the demo's ZooKeeper launcher nor the oracle
// that checks its verdict.
const demoProgram = "zkcoord-demo"

func newDemoCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "demo [FLAGS]",
		Short:       "watch workers share resources while things go wrong (starts its own ZooKeeper)",
		Annotations: brief(""),
		// zkcoord-demo reads the command line and shows the help.
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return runDemo(a, args)
		},
	}
}

// runDemo runs zkcoord-demo with args, found next to this program or on
// the PATH, with this program for the demo's workers, and passes its exit
// status on.
func runDemo(a *app, args []string) error {
	path, err := cli.FindProgram(demoProgram)
	if err != nil {
		return fmt.Errorf("the demo is played by %w: build it with 'make demo' (or go build -o %s ./cmd/zkcoord-demo)",
			err, demoProgram)
	}
	if self, err := os.Executable(); err == nil {
		args = append([]string{"--zkcoord", self}, args...)
	}
	c := exec.CommandContext(a.Ctx, path, args...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, a.Stdout, a.Stderr
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
		return cli.ExitStatus(ee.ExitCode())
	}
	if errors.Is(a.Ctx.Err(), context.Canceled) {
		return nil
	}
	return fmt.Errorf("running %s: %w", path, err)
}
