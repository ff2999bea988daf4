package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
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

// errHelp is returned after a help text was printed on request.
var errHelp = errors.New("help requested")

// exitCode maps the error a command returned to the process exit code.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	}
	return exitFailure
}

// command is one subcommand of zkcoord.
type command struct {
	name     string
	synopsis string // arguments after the name, for the usage line
	brief    string // shorter arguments, for the command list
	summary  string // one line, for the command list
	help     string // what the command does, several lines
	run      func(a *app, c *command, args []string) error
	hidden   bool // internal commands, not listed
}

// commands returns every command, in the order of the help text.
func commands() []*command {
	return []*command{
		lockCommand,
		electCommand,
		leaderCommand,
		rebalanceCommand,
		resourcesCommand,
		statusCommand,
		barrierCommand,
		queueCommand,
		counterCommand,
		demoCommand,
	}
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Flag groups: flags registered by app.flags for every command are shown
// apart from a command's own flags.
const (
	groupConn = "conn"
	groupLog  = "log"
)

// flagSet is a command's flags.
type flagSet struct {
	*flag.FlagSet
	cmd    *command
	sub    string            // subcommand name, if any
	groups map[string]string // flag name -> group, for the common flags
	out    io.Writer
}

// parse parses the flags of args, which may come before, between and after
// positional arguments. Everything after a "--" argument is returned as
// rest, untouched: the command to run.
func (fs *flagSet) parse(args []string) (pos, rest []string, err error) {
	// A negative number is an argument ("counter add /c -5"), unless it is
	// the value of the flag before it.
	args = slices.Clone(args)
	for i, a := range args {
		if a == "--" {
			break
		}
		if isNegativeNumber(a) && (i == 0 || !fs.takesValue(args[i-1])) {
			args[i] = negativeMark + a
		}
	}
	defer func() {
		for i, p := range pos {
			pos[i] = strings.TrimPrefix(p, negativeMark)
		}
	}()
	for {
		if err := fs.FlagSet.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.usage()
				return nil, nil, errHelp
			}
			msg := err.Error()
			if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
				msg = "unknown flag " + dashed(name)
			} else if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
				if value, rest, ok := strings.Cut(rest, " for flag -"); ok {
					name, why, _ := strings.Cut(rest, ": ")
					msg = fmt.Sprintf("invalid value %s for %s: %s", value, dashed(name), why)
				}
			} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
				msg = "flag " + dashed(name) + " needs a value"
			}
			return nil, nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: %s", fs.title(), msg)}
		}
		left := fs.FlagSet.Args()
		consumed := len(args) - len(left)
		if consumed > 0 && args[consumed-1] == "--" {
			return pos, left, nil
		}
		if len(left) == 0 {
			return pos, nil, nil
		}
		pos = append(pos, left[0])
		args = left[1:]
	}
}

// dashed returns how a flag is written in help and messages: -n for a
// one-letter name, --name otherwise (the parser accepts either form).
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// isSet reports whether the flag name was given on the command line.
func (fs *flagSet) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// negativeMark hides a negative number from the flag package.
const negativeMark = "\x00"

func isNegativeNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// takesValue reports whether arg is a flag that takes the next argument as
// its value.
func (fs *flagSet) takesValue(arg string) bool {
	if !strings.HasPrefix(arg, "-") || strings.Contains(arg, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(arg, "-"))
	if f == nil {
		return false
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return false
	}
	return true
}

func (fs *flagSet) title() string {
	if fs.sub != "" {
		return fs.cmd.name + " " + fs.sub
	}
	return fs.cmd.name
}

// usage prints the command's help: synopsis, description, its own flags,
// and a pointer to the common flags.
func (fs *flagSet) usage() {
	w := fs.out
	fmt.Fprintf(w, "Usage: zkcoord %s %s\n\n", fs.cmd.name, fs.cmd.synopsis)
	fmt.Fprintln(w, strings.Trim(fs.cmd.help, "\n"))
	own := fs.flagLines("")
	if len(own) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		printFlagLines(w, own)
	}
	if common := fs.flagLines(groupConn); len(common) > 0 {
		fmt.Fprintln(w, "\nConnection (flags override environment variables):")
		printFlagLines(w, common)
	}
	if logs := fs.flagLines(groupLog); len(logs) > 0 {
		fmt.Fprintln(w, "\nLogging and metrics:")
		printFlagLines(w, logs)
	}
	fmt.Fprintln(w, "\nExit codes: 0 ok, 1 failure, 2 usage error, 3 lock or leadership lost;")
	fmt.Fprintln(w, "a command run by zkcoord that ends by itself passes on its own exit status.")
}

// flagLines returns "--name VALUE\tusage (default x)" lines for the flags of
// a group ("" for the command's own flags), sorted by name. A flag whose
// zero value means "not given" shows no default.
func (fs *flagSet) flagLines(group string) []string {
	var lines []string
	fs.VisitAll(func(f *flag.Flag) {
		if fs.groups[f.Name] != group {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  " + dashed(f.Name)
		if name != "" {
			line += " " + strings.ToUpper(name)
		}
		line += "\t" + usage
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			line += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		lines = append(lines, line)
	})
	return lines
}

func printFlagLines(w io.Writer, lines []string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintln(tw, l)
	}
	tw.Flush()
}

// subcommand splits "SUB ARGS..." for commands with subcommands such as
// "queue put". When help is asked for before the subcommand, it returns the
// subcommand "" and arguments asking for help: the caller registers the
// command's flags as usual, and parsing them prints the help.
func subcommand(c *command, args []string, subs ...string) (string, []string, error) {
	lead, args, err := splitLeadingFlags(args)
	if err != nil {
		return "", nil, err
	}
	if len(args) == 0 {
		return "", nil, usagef("%s: missing subcommand (one of %s); see 'zkcoord %s --help'", c.name, strings.Join(subs, ", "), c.name)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		return "", append(lead, "--help"), nil
	}
	if !slices.Contains(subs, args[0]) {
		return "", nil, usagef("%s: unknown subcommand %q (want one of %s)", c.name, args[0], strings.Join(subs, ", "))
	}
	return args[0], append(lead, args[1:]...), nil
}

// printHelp prints the top-level help.
func printHelp(w io.Writer) {
	fmt.Fprint(w, `zkcoord coordinates processes through Apache ZooKeeper: locks, leader
election with failover, and a rebalancer that shares resources among workers.

Usage:
  zkcoord COMMAND [ARGUMENTS] [FLAGS]
  zkcoord COMMAND --help      details of one command
  zkcoord help [COMMAND]

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(tw, "  %s %s\t%s\n", c.name, c.brief, c.summary)
		}
	}
	tw.Flush()
	fmt.Fprint(w, `
Connection (accepted by every command; flags override the environment):
  --zk HOST:PORT,...        ZKCOORD_SERVERS          servers (default 127.0.0.1:2181)
  --chroot PATH             ZKCOORD_CHROOT           prefix of every path
  --session-timeout DUR     ZKCOORD_SESSION_TIMEOUT  session timeout (default 10s)
  --auth USER:PASSWORD      ZKCOORD_AUTH             digest credentials
  --acl open|creator        ZKCOORD_ACL              ACL of created nodes (creator: only
                                                     the authenticated user)
  --tls                     ZKCOORD_TLS              use TLS (implied by the --tls-* files)
  --tls-ca FILE             ZKCOORD_TLS_CA           CA certificates (PEM)
  --tls-cert FILE           ZKCOORD_TLS_CERT         client certificate (PEM)
  --tls-key FILE            ZKCOORD_TLS_KEY          client key (PEM)
  --connect-timeout DUR     ZKCOORD_CONNECT_TIMEOUT  give up connecting after (default 15s)

Logging and metrics:
  --log-level LEVEL         ZKCOORD_LOG_LEVEL        debug, info, warn or error (default info)
  --log-format FORMAT       ZKCOORD_LOG_FORMAT       text or json (default text)
  --metrics ADDR            ZKCOORD_METRICS          serve Prometheus metrics on ADDR/metrics

Environment of the commands zkcoord runs:
  ZKCOORD_TOKEN     fencing token (creation zxid of the lock, leader or barrier node):
                    larger for every later owner; pass it to the resource
  ZKCOORD_PATH      the lock or election path, or the group's path
  ZKCOORD_ID        participant id (elect) or client id in the group (rebalance)
  ZKCOORD_RESOURCE  the resource (rebalance)
  ZKCOORD_TERM, ZKCOORD_GROUP, ZKCOORD_GENERATION, ZKCOORD_NODE: see each command

Exit codes:
  0  success
  1  failure: cannot connect, an operation failed, a child could not be kept running
  2  usage error: bad flags or arguments
  3  the lock or leadership was lost (the command run under it was stopped)
  When a command run by zkcoord ends by itself, zkcoord exits with its status.
`)
}

func newFlagSet(c *command, sub string, out io.Writer) *flagSet {
	name := c.name
	if sub != "" {
		name += " " + sub
	}
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), cmd: c, sub: sub,
		groups: map[string]string{}, out: out}
	fs.FlagSet.SetOutput(io.Discard) // errors are reported by parse
	fs.FlagSet.Usage = func() {}
	return fs
}

// grouped marks flags already registered as belonging to group.
func (fs *flagSet) grouped(group string, names ...string) {
	for _, n := range names {
		fs.groups[n] = group
	}
}

// args checks the number of positional arguments.
func (fs *flagSet) args(pos []string, names ...string) error {
	if len(pos) < len(names) {
		return usagef("%s: missing %s", fs.title(), names[len(pos)])
	}
	if len(pos) > len(names) {
		return usagef("%s: unexpected argument %q", fs.title(), pos[len(names)])
	}
	return nil
}
