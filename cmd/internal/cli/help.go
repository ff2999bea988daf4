package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zkcoord/zkcoord"
)

// Annotations of the common flags.
const (
	annotGroup = "group" // conn or log, for the help
	annotEnv   = "env"   // the flag's environment variable
)

// Flag groups of the common flags, shown apart from a command's own flags.
const (
	groupConn = "conn"
	groupLog  = "log"
)

// Title names a command as the help and the messages do: its words after
// "zkcoord" ("lock break"); "zkcoord" for zkcoord itself. zkcoord-demo's
// command is named "demo", as zkcoord users know it.
func Title(cc *cobra.Command) string {
	return strings.TrimPrefix(cc.CommandPath(), "zkcoord ")
}

// synopsis is what follows a command's name in its usage line.
func synopsis(cc *cobra.Command) string {
	_, args, _ := strings.Cut(cc.Use, " ")
	return args
}

// DocCommand returns the command whose help cc shows: cc itself, or, for a
// subcommand that has no description of its own ("queue take"), the
// command it belongs to.
func DocCommand(cc *cobra.Command) *cobra.Command {
	for cc.Long == "" && cc.HasParent() && cc.Parent().HasParent() {
		cc = cc.Parent()
	}
	return cc
}

// PrintCommandHelp prints a command's help: synopsis, description, its
// subcommands that have a help of their own, its own flags, and the
// common flags.
func PrintCommandHelp(cc *cobra.Command, w io.Writer) {
	fmt.Fprintf(w, "Usage: zkcoord %s %s\n\n", Title(cc), synopsis(cc))
	fmt.Fprintln(w, strings.Trim(cc.Long, "\n"))
	var subs []string
	for _, sc := range cc.Commands() {
		if sc.Long != "" && !sc.Hidden {
			subs = append(subs, fmt.Sprintf("  zkcoord %s %s\t%s", Title(sc), synopsis(sc), sc.Short))
		}
	}
	if len(subs) > 0 {
		fmt.Fprintln(w, "\nSubcommands:")
		PrintLines(w, subs)
	}
	flags := pflag.NewFlagSet(cc.Name(), pflag.ContinueOnError)
	flags.AddFlagSet(cc.LocalFlags())
	flags.AddFlagSet(cc.InheritedFlags())
	if own := flagLines(flags, "", false); len(own) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		PrintLines(w, own)
	}
	PrintCommonFlags(w, flags, "Connection (flags override environment variables):", false)
	fmt.Fprintln(w, "\nExit codes: 0 ok, 1 failure, 2 usage error, 3 lock or leadership lost;")
	fmt.Fprintln(w, "a command run by zkcoord that ends by itself passes on its own exit status.")
}

// PrintCommonFlags prints the flags every command takes: the connection
// flags under connHeading, then the logging and metrics flags; with env,
// each flag's environment variable follows its name.
func PrintCommonFlags(w io.Writer, fs *pflag.FlagSet, connHeading string, env bool) {
	fmt.Fprintln(w, "\n"+connHeading)
	PrintLines(w, flagLines(fs, groupConn, env))
	fmt.Fprintln(w, "\nLogging and metrics:")
	PrintLines(w, flagLines(fs, groupLog, env))
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

// PrintLines prints lines whose columns are separated by tabs, aligned.
func PrintLines(w io.Writer, lines []string) {
	tw := Table(w)
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

// FlagError reports a flag cobra could not parse, on command line args, as
// a usage error. An argument that starts with one dash and is not a
// shorthand flag is explained: a negative number goes after "--", and a
// long flag takes two dashes.
func FlagError(cc *cobra.Command, args []string, err error) error {
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
	if t := Title(cc); t != "zkcoord" {
		msg = t + ": " + msg
	}
	return &ExitError{Code: ExitUsage, Err: errors.New(msg)}
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

// Report writes the error a command returned, if any, on stderr as the
// zkcoord programs do, and returns the exit code: a usage error is
// followed by where to read the usage of cc, the command that failed.
func Report(stderr io.Writer, cc *cobra.Command, err error) int {
	code := ExitCode(err)
	var ee *ExitError
	if err == nil || errors.As(err, &ee) && ee.Err == nil {
		return code
	}
	fmt.Fprintf(stderr, "zkcoord: %s\n", Message(err))
	if errors.Is(err, zkcoord.ErrNoAuth) {
		fmt.Fprintln(stderr, "The node's ACL does not allow this; give credentials with --auth or ZKCOORD_AUTH.")
	}
	if code == ExitUsage {
		fmt.Fprintln(stderr, usageHint(cc))
	}
	return code
}

// usageHint says where to read the usage of cc.
func usageHint(cc *cobra.Command) string {
	if cc != nil {
		if t := Title(DocCommand(cc)); t != "zkcoord" && t != "help" {
			return fmt.Sprintf("Run 'zkcoord %s --help' for usage.", t)
		}
	}
	return "Run 'zkcoord help' for usage."
}
