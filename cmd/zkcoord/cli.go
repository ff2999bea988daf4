package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zkcoord/zkcoord"
)

// command describes one subcommand of zkcoord; newRoot turns it into a
// cobra command.
//
// Its run function registers the command's flags on the flag set a.flags
// returns and then calls parse on it. newRoot calls run once while it builds
// the command tree ("declaring"): parse then returns errDeclared, so the
// flags cobra parses and documents are exactly those run uses. When the
// command is executed, run is called again and parse hands it the values
// cobra parsed and the positional arguments.
type command struct {
	name     string
	synopsis string // arguments after the name, for the usage line
	brief    string // shorter arguments, for the command list
	summary  string // one line, for the command list
	help     string // what the command does, several lines
	run      func(a *app, c *command, args []string) error
	hidden   bool // internal commands, not listed
	// rawArgs: cobra parses no flags; run gets the command line as it is
	// (and "--help" in it) to pass on to another program.
	rawArgs bool
	// runsCommand: the arguments after "--" are a command to run, not
	// more positional arguments.
	runsCommand bool
	// parent, when set, makes this a subcommand of the command of that name
	// (like "lock break").
	parent string

	subs      []string // subcommands, as declared by subcommand
	declaring bool     // run is called to declare the flags
}

// errDeclared ends a command's run function once its flags are declared.
var errDeclared = errors.New("flags declared")

// flagSet is a command's own flags.
type flagSet struct {
	*pflag.FlagSet
	cmd *command
	sub string         // subcommand name, if any
	cc  *cobra.Command // the cobra command being run (nil while declaring)
}

// Int registers an int flag; a one-letter name is also a shorthand (-n).
func (fs *flagSet) Int(name string, value int, usage string) *int {
	p := new(int)
	fs.IntVar(p, name, value, usage)
	return p
}

// IntVar is like Int with a given variable.
func (fs *flagSet) IntVar(p *int, name string, value int, usage string) {
	short := ""
	if len(name) == 1 {
		short = name
	}
	fs.IntVarP(p, name, short, value, usage)
}

// parse returns the positional arguments and, after a "--" argument, the
// command to run (rest), and fills the flag variables with what cobra
// parsed. While the command is declared, it returns errDeclared.
func (fs *flagSet) parse(args []string) (pos, rest []string, err error) {
	if fs.cc == nil {
		return nil, nil, errDeclared
	}
	var serr error
	fs.cc.Flags().Visit(func(f *pflag.Flag) {
		own := fs.Lookup(f.Name)
		switch {
		case own == nil || serr != nil:
		case isSlice(f.Value) && isSlice(own.Value):
			serr = own.Value.(pflag.SliceValue).Replace(f.Value.(pflag.SliceValue).GetSlice())
			own.Changed = true
		default:
			serr = fs.Set(f.Name, f.Value.String())
		}
	})
	if serr != nil {
		return nil, nil, usagef("%s: %v", fs.title(), serr)
	}
	if n := fs.cc.ArgsLenAtDash(); n >= 0 && n <= len(args) && fs.cmd.runsCommand {
		return args[:n], args[n:], nil
	}
	return args, nil, nil
}

// isSet reports whether the flag name (the command's own, or a common one)
// was given on the command line.
func (fs *flagSet) isSet(name string) bool {
	return fs.cc != nil && fs.cc.Flags().Changed(name)
}

func (fs *flagSet) title() string {
	name := strings.TrimSpace(fs.cmd.parent + " " + fs.cmd.name)
	if fs.sub != "" {
		return name + " " + fs.sub
	}
	return name
}

// subcommand splits "SUB ARGS..." for commands with subcommands such as
// "queue put". While the command is declared, it records subs and returns
// no subcommand.
func subcommand(c *command, args []string, subs ...string) (string, []string, error) {
	if c.declaring {
		c.subs = subs
		return "", nil, nil
	}
	if len(args) == 0 {
		return "", nil, usagef("%s: missing subcommand (one of %s); see 'zkcoord %s --help'", c.name, joinComma(subs), c.name)
	}
	return args[0], args[1:], nil
}

// subFlags reads the subcommand, one of subs, from args, and returns it,
// its flag set and the arguments after it.
func (a *app) subFlags(c *command, args []string, subs ...string) (string, *flagSet, []string, error) {
	sub, args, err := subcommand(c, args, subs...)
	if err != nil {
		return "", nil, nil, err
	}
	return sub, a.flags(c, sub), args, nil
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

// pathArg parses args and returns the command's one PATH argument,
// validated, and the command line after "--", if any.
func (fs *flagSet) pathArg(args []string) (string, []string, error) {
	pos, rest, err := fs.parse(args)
	if err != nil {
		return "", nil, err
	}
	if err := fs.args(pos, "PATH"); err != nil {
		return "", nil, err
	}
	if err := zkcoord.ValidatePath(pos[0]); err != nil {
		return "", nil, usagef("%s: %v", strings.TrimSpace(fs.cmd.parent+" "+fs.cmd.name), err)
	}
	return pos[0], rest, nil
}

func isSlice(v pflag.Value) bool {
	_, ok := v.(pflag.SliceValue)
	return ok
}

// declare makes the cobra command(s) of c: its run function registers the
// flags (see command).
func declare(a *app, c *command) *cobra.Command {
	cc := &cobra.Command{
		Use:         c.name + " " + c.synopsis,
		Short:       c.summary,
		Long:        strings.Trim(c.help, "\n"),
		Hidden:      c.hidden,
		Annotations: map[string]string{annotBrief: c.brief},
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
			Use:   sub + " " + c.synopsis,
			Short: c.summary,
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
