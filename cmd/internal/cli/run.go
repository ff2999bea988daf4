package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Run runs a program's command line and returns its exit code. root builds
// the command tree with a context that SIGINT and SIGTERM cancel; done
// runs when the command has returned, while those signals are still
// caught.
func Run(args []string, stderr io.Writer, done func(), root func(ctx context.Context) *cobra.Command) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer done()
	cmd := root(ctx)
	cmd.SetArgs(args)
	cc, err := cmd.ExecuteC()
	return Report(stderr, cc, err)
}

// Prepare readies a program's root command as every zkcoord program has
// it: its output streams, a flag that does not parse reported as a usage
// error on the command line args, and the connection and logging flags on
// every command.
func Prepare(root *cobra.Command, stdout, stderr io.Writer, args []string, conn *ConnOptions, logging *LogOptions) {
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(cc *cobra.Command, err error) error { return FlagError(cc, args, err) })
	pf := root.PersistentFlags()
	conn.Register(pf)
	logging.Register(pf)
}
