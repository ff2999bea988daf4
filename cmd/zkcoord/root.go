package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Annotations of cobra commands and flags.
const (
	annotMoved   = "moved"   // command: its arguments were moved after "--" (normalizeArgs)
	annotCommand = "command" // command: the name of its zkcoord command
	annotGroup   = "group"   // flag: conn or log, for the help
	annotEnv     = "env"     // flag: its environment variable
)

// Flag groups of the common flags, shown apart from a command's own flags.
const (
	groupConn = "conn"
	groupLog  = "log"
)

// newRoot builds the command tree of a.
func newRoot(a *app) *cobra.Command {
	cobra.EnableCommandSorting = false // the order of commands()
	root := &cobra.Command{
		Use:           "zkcoord",
		Short:         "coordinate processes through Apache ZooKeeper",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q", args[0])
			}
			return nil
		},
		RunE: func(cc *cobra.Command, _ []string) error {
			printHelp(cc, a.stderr)
			return usagef("missing command")
		},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(flagError)
	pf := root.PersistentFlags()
	a.conn.register(pf)
	a.logging.register(pf)
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(cc *cobra.Command, args []string) {
		switch c := commandOf(cc); {
		case cc == root:
			printHelp(cc, cc.OutOrStdout())
		case c != nil && c.rawArgs: // the program run shows the help
			if err := a.execute(cc, c, []string{"--help"}); err != nil {
				fmt.Fprintf(a.stderr, "zkcoord: %v\n", err)
			}
		case c != nil:
			printCommandHelp(cc, c, cc.OutOrStdout())
		default:
			defaultHelp(cc, args)
		}
	})

	byName := map[string]*cobra.Command{}
	for _, c := range allCommands() {
		cc := declare(a, c)
		if c.parent != "" {
			byName[c.parent].AddCommand(cc)
		} else {
			root.AddCommand(cc)
			byName[c.name] = cc
		}
	}
	completeValues(root)
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [COMMAND]",
		Short: "help about a command",
		RunE: func(_ *cobra.Command, args []string) error {
			cc, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usagef("unknown command %q", strings.Join(args, " "))
			}
			return cc.Help()
		},
	})
	root.InitDefaultCompletionCmd()
	return root
}

// allCommands is commands and the subcommands declared apart from them.
func allCommands() []*command {
	return append(commands(), extraCommands()...)
}

// commandOf returns the zkcoord command behind a cobra command.
func commandOf(cc *cobra.Command) *command {
	if name, ok := cc.Annotations[annotCommand]; ok {
		return commandByName(name)
	}
	return nil
}

// commandByName finds a command (or subcommand, "lock break") by its name.
func commandByName(name string) *command {
	for _, c := range allCommands() {
		if strings.TrimSpace(c.parent+" "+c.name) == name {
			return c
		}
	}
	return nil
}

// declare makes the cobra command(s) of c: its run function registers the
// flags (see command).
func declare(a *app, c *command) *cobra.Command {
	cc := &cobra.Command{
		Use:         c.name + " " + c.synopsis,
		Short:       c.summary,
		Long:        strings.Trim(c.help, "\n"),
		Hidden:      c.hidden,
		Annotations: map[string]string{annotCommand: strings.TrimSpace(c.parent + " " + c.name)},
	}
	if c.rawArgs {
		cc.DisableFlagParsing = true
		cc.RunE = func(cc *cobra.Command, args []string) error { return a.execute(cc, c, args) }
		return cc
	}
	c.declaring = true
	a.declaring = cc
	if err := c.run(a, c, nil); !errors.Is(err, errDeclared) {
		panic(fmt.Sprintf("zkcoord %s: declaring its flags: %v", c.name, err))
	}
	a.declaring = nil
	c.declaring = false
	if len(c.subs) == 0 {
		cc.RunE = func(cc *cobra.Command, args []string) error {
			return a.execute(cc, c, args)
		}
		return cc
	}
	subs := c.subs
	cc.Args = cobra.ArbitraryArgs
	cc.RunE = func(cc *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usagef("%s: missing subcommand (one of %s); see 'zkcoord %s --help'", c.name, joinComma(subs), c.name)
		case args[0] == "help":
			return cc.Help()
		}
		return usagef("%s: unknown subcommand %q (want one of %s)", c.name, args[0], joinComma(subs))
	}
	for _, sub := range subs {
		sc := &cobra.Command{
			Use:         sub + " " + c.synopsis,
			Short:       c.summary,
			Long:        cc.Long,
			Annotations: cc.Annotations,
			RunE: func(sc *cobra.Command, args []string) error {
				return a.execute(sc, c, append([]string{sub}, args...))
			},
		}
		sc.Flags().AddFlagSet(cc.Flags())
		cc.AddCommand(sc)
	}
	return cc
}

// execute runs c with the flags cobra parsed into cc.
func (a *app) execute(cc *cobra.Command, c *command, args []string) error {
	a.running = cc
	return c.run(a, c, args)
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

// flagError reports a flag cobra could not parse as a usage error.
func flagError(cc *cobra.Command, err error) error {
	title := strings.TrimPrefix(cc.CommandPath(), cc.Root().Name()+" ")
	var (
		notExist *pflag.NotExistError
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		if name == "" {
			name = notExist.GetSpecifiedShortnames()
		}
		msg = "unknown flag " + dashed(name)
	case errors.As(err, &invalid):
		msg = fmt.Sprintf("invalid value %q for %s: %v", invalid.GetValue(), dashed(invalid.GetFlag().Name), invalid.Unwrap())
	case errors.As(err, &required):
		msg = "flag " + dashed(required.GetFlag().Name) + " needs a value"
	}
	if cc == cc.Root() {
		return usagef("%s", msg)
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%s: %s", title, msg)}
}

// printCommandHelp prints a command's help: synopsis, description, its own
// flags, and the common flags.
func printCommandHelp(cc *cobra.Command, c *command, w io.Writer) {
	fmt.Fprintf(w, "Usage: zkcoord %s %s\n\n", strings.TrimSpace(c.parent+" "+c.name), c.synopsis)
	fmt.Fprintln(w, cc.Long)
	var subs []string
	for _, sc := range cc.Commands() {
		if s := commandOf(sc); s != nil && s.parent != "" && !sc.Hidden {
			subs = append(subs, fmt.Sprintf("  zkcoord %s %s %s\t%s", c.name, s.name, s.synopsis, sc.Short))
		}
	}
	if len(subs) > 0 {
		fmt.Fprintln(w, "\nSubcommands:")
		printLines(w, subs)
	}
	if own := flagLines(cc.LocalNonPersistentFlags(), "", false); len(own) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		printLines(w, own)
	}
	printCommonFlags(w, cc.InheritedFlags(), "Connection (flags override environment variables):", false)
	fmt.Fprintln(w, "\nExit codes: 0 ok, 1 failure, 2 usage error, 3 lock or leadership lost;")
	fmt.Fprintln(w, "a command run by zkcoord that ends by itself passes on its own exit status.")
}

// printCommonFlags prints the flags every command takes: the connection
// flags under connHeading, then the logging and metrics flags; with env,
// each flag's environment variable follows its name.
func printCommonFlags(w io.Writer, fs *pflag.FlagSet, connHeading string, env bool) {
	fmt.Fprintln(w, "\n"+connHeading)
	printLines(w, flagLines(fs, groupConn, env))
	fmt.Fprintln(w, "\nLogging and metrics:")
	printLines(w, flagLines(fs, groupLog, env))
}

// flagLines returns "--name VALUE\tusage (default x)" lines for the flags of
// a group ("" for a command's own flags), sorted by name; with env, the
// environment variable of each flag follows its name. A flag whose zero
// value (or a negative one) means "not given" shows no default.
func flagLines(fs *pflag.FlagSet, group string, env bool) []string {
	var lines []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || f.Hidden || annotation(f, annotGroup) != group {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		line := "  " + dashed(f.Name)
		if name != "" && f.NoOptDefVal == "" {
			line += " " + strings.ToUpper(name)
		}
		if env {
			line += "\t" + annotation(f, annotEnv)
		}
		line += "\t" + usage
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" &&
			!strings.HasPrefix(f.DefValue, "-") {
			line += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		lines = append(lines, line)
	})
	return lines
}

func annotation(f *pflag.Flag, key string) string {
	if v := f.Annotations[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func printLines(w io.Writer, lines []string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintln(tw, l)
	}
	tw.Flush()
}

// printHelp prints the top-level help.
func printHelp(root *cobra.Command, w io.Writer) {
	root = root.Root()
	fmt.Fprint(w, `zkcoord coordinates processes through Apache ZooKeeper: locks, leader
election with failover, and a rebalancer that shares resources among workers.

Usage:
  zkcoord COMMAND [ARGUMENTS] [FLAGS]
  zkcoord COMMAND --help      details of one command
  zkcoord help [COMMAND]

Flags may come before, between and after the arguments; everything after
"--" is the command that zkcoord runs.

Commands:
`)
	var lines []string
	for _, cc := range root.Commands() {
		if cc.Hidden || cc.Name() == "help" {
			continue
		}
		brief := ""
		if c := commandOf(cc); c != nil {
			brief = c.brief
		} else if cc.Name() == "completion" {
			brief = "bash|zsh|fish|powershell"
		}
		lines = append(lines, fmt.Sprintf("  %s %s\t%s", cc.Name(), brief, cc.Short))
	}
	printLines(w, lines)
	printCommonFlags(w, root.PersistentFlags(), "Connection (accepted by every command; flags override the environment):", true)
	fmt.Fprint(w, `
Environment of the commands zkcoord runs:
  ZKCOORD_TOKEN     fencing token (creation zxid of the lock, leader or barrier node):
                    larger for every later owner; pass it to the resource
  ZKCOORD_PATH      the lock or election path, or the group's path
  ZKCOORD_ID        participant id (elect) or client id in the group (rebalance)
  ZKCOORD_RESOURCE  the resource (rebalance)
  ZKCOORD_TERM, ZKCOORD_GROUP, ZKCOORD_GENERATION, ZKCOORD_NODE: see each command

Shell completion: see 'zkcoord completion --help'.

Exit codes:
  0  success
  1  failure: cannot connect, an operation failed, a child could not be kept running
  2  usage error: bad flags or arguments
  3  the lock or leadership was lost (the command run under it was stopped)
  When a command run by zkcoord ends by itself, zkcoord exits with its status.
`)
}

// extraCommands are the subcommands declared under another command.
func extraCommands() []*command {
	return []*command{lockBreakCommand, lockRevokeCommand}
}

// flagValues are the values of flags that take one of a few words, offered
// by shell completion: common flags, then a command's own.
var flagValues = map[string][]string{
	"log-level":  {"debug", "info", "warn", "error"},
	"log-format": {"text", "json"},
	"acl":        {"open", "creator"},
	"kind":       {"mutex", "rwlock", "semaphore"},
	"mode":       {"incremental", "resource-barrier", "global-barrier"},
	"restart":    {"always", "on-failure", "never"},
}

// completeValues registers the completion of flagValues on every command
// of the tree that has such a flag.
func completeValues(cc *cobra.Command) {
	fs := cc.LocalNonPersistentFlags()
	if cc == cc.Root() {
		fs = cc.PersistentFlags()
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if vals, ok := flagValues[f.Name]; ok {
			_ = cc.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp))
		}
	})
	for _, sc := range cc.Commands() {
		completeValues(sc)
	}
}
