package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Annotations of cobra commands and flags.
const (
	annotBrief = "brief" // command: its arguments, shortened, for the command list
	annotGroup = "group" // flag: conn or log, for the help
	annotEnv   = "env"   // flag: its environment variable
)

// Flag groups of the common flags, shown apart from a command's own flags.
const (
	groupConn = "conn"
	groupLog  = "log"
)

// title names a command as the help and the messages do: its words after
// "zkcoord" ("lock break"); "zkcoord" for the root.
func title(cc *cobra.Command) string {
	return strings.TrimPrefix(cc.CommandPath(), "zkcoord ")
}

// synopsis is what follows a command's name in its usage line.
func synopsis(cc *cobra.Command) string {
	_, args, _ := strings.Cut(cc.Use, " ")
	return args
}

// docCommand returns the command whose help cc shows: cc itself, or, for a
// subcommand that has no description of its own ("queue take"), the
// command it belongs to.
func docCommand(cc *cobra.Command) *cobra.Command {
	for cc.Long == "" && cc.HasParent() && cc.Parent().HasParent() {
		cc = cc.Parent()
	}
	return cc
}

// printCommandHelp prints a command's help: synopsis, description, its
// subcommands that have a help of their own, its own flags, and the
// common flags.
func printCommandHelp(cc *cobra.Command, w io.Writer) {
	fmt.Fprintf(w, "Usage: zkcoord %s %s\n\n", title(cc), synopsis(cc))
	fmt.Fprintln(w, strings.Trim(cc.Long, "\n"))
	var subs []string
	for _, sc := range cc.Commands() {
		if sc.Long != "" && !sc.Hidden {
			subs = append(subs, fmt.Sprintf("  zkcoord %s %s\t%s", title(sc), synopsis(sc), sc.Short))
		}
	}
	if len(subs) > 0 {
		fmt.Fprintln(w, "\nSubcommands:")
		printLines(w, subs)
	}
	flags := pflag.NewFlagSet(cc.Name(), pflag.ContinueOnError)
	flags.AddFlagSet(cc.LocalFlags())
	flags.AddFlagSet(cc.InheritedFlags())
	if own := flagLines(flags, "", false); len(own) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		printLines(w, own)
	}
	printCommonFlags(w, flags, "Connection (flags override environment variables):", false)
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

// dashed returns how a flag is written in help and messages: -n for a
// one-letter name, --name otherwise.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagError reports a flag cobra could not parse, on command line args, as
// a usage error. An argument that starts with one dash and is not a
// shorthand flag is explained: a negative number goes after "--", and a
// long flag takes two dashes.
func flagError(cc *cobra.Command, args []string, err error) error {
	var (
		notExist *pflag.NotExistError
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() == "":
		msg = "unknown flag --" + notExist.GetSpecifiedName()
	case errors.As(err, &notExist):
		msg = "unknown flag -" + notExist.GetSpecifiedName()
		if arg := shortArg(args, notExist.GetSpecifiedShortnames()); isNegativeNumber(arg) {
			msg = fmt.Sprintf(`%s is read as a flag: arguments that start with "-" go after "--" (zkcoord counter add /c -- -5)`, arg)
		} else if name, _, _ := strings.Cut(strings.TrimPrefix(arg, "-"), "="); len(name) > 1 && cc.Flags().Lookup(name) != nil {
			msg = fmt.Sprintf("unknown flag %s: a long flag takes two dashes (--%s)", arg, name)
		}
	case errors.As(err, &invalid):
		msg = fmt.Sprintf("invalid value %q for %s: %v", invalid.GetValue(), dashed(invalid.GetFlag().Name), invalid.Unwrap())
	case errors.As(err, &required):
		msg = "flag " + dashed(required.GetFlag().Name) + " needs a value"
	}
	if t := title(cc); t != "zkcoord" {
		msg = t + ": " + msg
	}
	return &exitError{code: exitUsage, err: errors.New(msg)}
}

// shortArg returns the argument, before "--", that starts with one dash
// and ends with rest: the one in which the shorthand flags rest were not
// found ("-seed" for "seed", "-help" for "elp" after -h).
func shortArg(args []string, rest string) string {
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[:i]
	}
	if slices.Contains(args, "-"+rest) {
		return "-" + rest
	}
	for _, arg := range args {
		if !strings.HasPrefix(arg, "--") && strings.HasPrefix(arg, "-") && strings.HasSuffix(arg, rest) {
			return arg
		}
	}
	return ""
}

// isNegativeNumber reports whether s is a negative integer like -5.
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
