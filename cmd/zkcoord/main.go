package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/zkcoord/internal/supervise"
	"github.com/zkcoord/zkcoord/metrics"
)

func main() {
	supervise.RunShimIfAsked()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs one command line and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, args: args, rec: metrics.Nop{}, log: slog.New(slog.DiscardHandler)}
	return cli.Run(args, stderr, a.close, func(ctx context.Context) *cobra.Command {
		a.ctx = ctx
		return newRootCommand(a)
	})
}

// app is what every command shares: output streams, the common flags and
// what they set up (logger, metrics).
type app struct {
	ctx            context.Context // cancelled by SIGINT and SIGTERM
	stdout, stderr io.Writer
	args           []string // the command line, for messages

	conn    cli.ConnOptions
	logging cli.LogOptions
	log     *slog.Logger
	rec     metrics.Recorder
	closers []func()
	setUp   bool
}

// setup applies the common flags after parsing: it builds the logger and
// starts the metrics server if asked to. Every command calls it once its
// arguments are checked; later calls do nothing.
func (a *app) setup() error {
	if a.setUp {
		return nil
	}
	log, rec, stop, err := a.logging.Start(a.stderr)
	if err != nil {
		return err
	}
	a.log, a.rec = log, rec
	a.closers = append(a.closers, stop)
	a.setUp = true
	return nil
}

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// printf writes command output (not logs) on standard output.
func (a *app) printf(format string, args ...any) {
	fmt.Fprintf(a.stdout, format, args...)
}

// printLine prints v as JSON on one line of standard output, for a
// long-running command whose reader waits for each line.
func (a *app) printLine(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are printed
	}
	a.printf("%s\n", b)
}

// printJSON prints v as indented JSON on standard output.
func (a *app) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	a.printf("%s\n", b)
	return nil
}
