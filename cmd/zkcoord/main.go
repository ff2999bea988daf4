package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/metrics"
)

func main() {
	runShimIfAsked()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs one command line and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{ctx: ctx, stdout: stdout, stderr: stderr, rec: metrics.Nop{},
		log: slog.New(slog.DiscardHandler)}
	defer a.close()
	err := a.dispatch(args)
	code := exitCode(err)
	if err != nil && !errors.Is(err, errHelp) {
		var ee *exitError
		if !errors.As(err, &ee) || ee.err != nil {
			fmt.Fprintf(stderr, "zkcoord: %v\n", err)
			if errors.Is(err, zkcoord.ErrNoAuth) {
				fmt.Fprintln(stderr, "The node's ACL does not allow this; give credentials with --auth or ZKCOORD_AUTH.")
			}
			if code == exitUsage {
				if a.cmd != "" {
					fmt.Fprintf(stderr, "Run 'zkcoord %s --help' for usage.\n", a.cmd)
				} else {
					fmt.Fprintln(stderr, "Run 'zkcoord help' for usage.")
				}
			}
		}
	}
	return code
}

// app is what every command shares: output streams, the common flags and
// what they set up (logger, metrics).
type app struct {
	ctx            context.Context // cancelled by SIGINT and SIGTERM
	stdout, stderr io.Writer

	conn    connOptions
	logging logOptions
	log     *slog.Logger
	rec     metrics.Recorder
	closers []func()
	cmd     string // the command being run
}

func (a *app) dispatch(args []string) error {
	if len(args) == 0 {
		printHelp(a.stderr)
		return usagef("missing command")
	}
	args, err := hoistCommonFlags(args)
	if err != nil {
		return err
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			c := findCommand(rest[0])
			if c == nil {
				return usagef("unknown command %q", rest[0])
			}
			return c.run(a, c, []string{"--help"})
		}
		printHelp(a.stdout)
		return nil
	}
	c := findCommand(name)
	if c == nil {
		return usagef("unknown command %q", name)
	}
	a.cmd = c.name
	return c.run(a, c, rest)
}

// flags returns a flag set for command c (and subcommand sub) with the
// common connection, logging and metrics flags registered.
func (a *app) flags(c *command, sub string) *flagSet {
	fs := newFlagSet(c, sub, a.stdout)
	a.conn.register(fs)
	a.logging.register(fs)
	return fs
}

// setup applies the common flags after parsing: it builds the logger and
// starts the metrics server if asked to.
func (a *app) setup() error {
	l, err := a.logging.logger(a.stderr)
	if err != nil {
		return err
	}
	a.log = l
	if a.logging.metricsAddr != "" {
		rec, stop, err := serveMetrics(a.logging.metricsAddr, a.log)
		if err != nil {
			return err
		}
		a.rec = rec
		a.closers = append(a.closers, stop)
	}
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

// hoistCommonFlags lets the common flags come before the command
// ("zkcoord --zk host:2181 status g") by moving them after its name.
func hoistCommonFlags(args []string) ([]string, error) {
	lead, rest, err := splitLeadingFlags(args)
	if err != nil || len(lead) == 0 {
		return args, err
	}
	if len(rest) == 0 {
		return nil, usagef("missing command")
	}
	return append(append([]string{rest[0]}, lead...), rest[1:]...), nil
}

// splitLeadingFlags splits the common flags (with their values) at the
// start of args from the rest.
func splitLeadingFlags(args []string) (lead, rest []string, err error) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
		name := strings.TrimLeft(args[i], "-")
		if name == "h" || name == "help" {
			break
		}
		name, _, hasValue := strings.Cut(name, "=")
		switch {
		case commonBoolFlags[name]:
			lead = append(lead, args[i])
			i++
		case !commonValueFlags[name]:
			return nil, nil, usagef("unknown flag %s before the command (only the connection, logging and metrics flags may come first)", args[i])
		case hasValue:
			lead = append(lead, args[i])
			i++
		case i+1 < len(args):
			lead = append(lead, args[i], args[i+1])
			i += 2
		default:
			return nil, nil, usagef("flag %s needs a value", args[i])
		}
	}
	return lead, args[i:], nil
}

var (
	commonBoolFlags  = map[string]bool{"tls": true}
	commonValueFlags = map[string]bool{"zk": true, "chroot": true, "session-timeout": true, "auth": true, "acl": true,
		"tls-ca": true, "tls-cert": true, "tls-key": true, "connect-timeout": true, "log-level": true,
		"log-format": true, "metrics": true}
)
