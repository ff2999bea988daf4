package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/metrics"
)

// App is what every command of a zkcoord program shares: the output
// streams, the command line, the common flags and what they set up (the
// logger and the metrics recorder).
type App struct {
	Ctx            context.Context // cancelled by SIGINT and SIGTERM
	Stdout, Stderr io.Writer
	Args           []string // the command line, for messages

	Conn    ConnOptions
	Logging LogOptions
	Log     *slog.Logger
	Rec     metrics.Recorder
	stop    func() // stops what Setup started; nil before Setup
}

// NewApp returns the App of the command line args, silent and recording
// no metrics until Setup.
func NewApp(args []string, stdout, stderr io.Writer) *App {
	return &App{Stdout: stdout, Stderr: stderr, Args: args, Rec: metrics.Nop{}, Log: slog.New(slog.DiscardHandler)}
}

// Run runs the command line and returns its exit code. root builds the
// command tree once Ctx is set to a context that SIGINT and SIGTERM
// cancel; what Setup started is stopped when the command has returned,
// while those signals are still caught.
func (a *App) Run(root func() *cobra.Command) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer a.close()
	a.Ctx = ctx
	cmd := root()
	cmd.SetArgs(a.Args)
	cc, err := cmd.ExecuteC()
	return Report(a.Stderr, cc, err)
}

// Prepare readies a program's root command as every zkcoord program has
// it: its output streams, a flag that does not parse reported as a usage
// error on the command line, and the connection and logging flags on
// every command.
func (a *App) Prepare(root *cobra.Command) {
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	root.SetFlagErrorFunc(func(cc *cobra.Command, err error) error { return FlagError(cc, a.Args, err) })
	pf := root.PersistentFlags()
	a.Conn.Register(pf)
	a.Logging.Register(pf)
}

// Setup applies the common flags after parsing: it builds the logger and
// starts the metrics server if asked to. Every command calls it once its
// arguments are checked; later calls do nothing.
func (a *App) Setup() error {
	if a.stop != nil {
		return nil
	}
	log, rec, stop, err := a.Logging.Start(a.Stderr)
	if err != nil {
		return err
	}
	a.Log, a.Rec, a.stop = log, rec, stop
	return nil
}

// close stops what Setup started.
func (a *App) close() {
	if a.stop != nil {
		a.stop()
	}
}

// ConnectConfig opens a Session with cfg, waiting at most the connect
// timeout (see Connect).
func (a *App) ConnectConfig(ctx context.Context, cfg zkcoord.Config) (*zkcoord.Session, error) {
	return Connect(ctx, cfg, a.Conn.ConnectTimeout, a.Log)
}

// NoArgs is the cobra Args of a command that takes no positional
// argument: one is a usage error, says what, then quotes it.
func NoArgs(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return Usagef("%s %q", what, args[0])
		}
		return nil
	}
}
