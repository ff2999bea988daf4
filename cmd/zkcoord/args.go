package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// normalizeArgs adapts a command line to what cobra parses, for two forms
// zkcoord has always accepted:
//
//   - a long flag with a single dash (-zk, -json, -help) is read as --zk;
//   - a negative number is an argument ("counter add /c -5"), not a flag,
//     unless it is the value of the flag before it. When one is found (and
//     the line has no "--"), the arguments move after a "--", where cobra
//     takes everything as an argument, and the command is marked
//     (annotMoved) so that its parse knows that no command to run follows.
//
// Nothing after a "--" is touched: it is the command zkcoord runs.
func normalizeArgs(root *cobra.Command, args []string) []string {
	cc, _, err := root.Find(args)
	if err != nil || cc == nil {
		cc = root
	}
	lookup := func(name string) *pflag.Flag {
		if f := cc.Flags().Lookup(name); f != nil {
			return f
		}
		if f := cc.InheritedFlags().Lookup(name); f != nil {
			return f
		}
		if name == "help" {
			return &pflag.Flag{Name: "help", NoOptDefVal: "true"}
		}
		return nil
	}
	out := make([]string, len(args))
	copy(out, args)
	negative := false
	for i, arg := range args {
		if arg == "--" {
			return out // a command to run follows: negative numbers stay as they are
		}
		if isNegativeNumber(arg) {
			negative = true
		} else if len(arg) > 2 && arg[0] == '-' && arg[1] != '-' {
			name, _, _ := strings.Cut(arg[1:], "=")
			if len(name) > 1 && lookup(name) != nil {
				out[i] = "-" + arg
			}
		}
	}
	if !negative {
		return out
	}
	args = out
	path := strings.Fields(cc.CommandPath())[1:] // the command's words after "zkcoord"
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if isNegativeNumber(arg) {
			pos = append(pos, arg)
			continue
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if len(path) > 0 && arg == path[0] && len(pos) == 0 {
				path = path[1:]
				flags = append(flags, arg)
			} else {
				pos = append(pos, arg)
			}
			continue
		}
		flags = append(flags, arg)
		// A flag that takes a value takes the next argument, whatever it is.
		if strings.HasPrefix(arg, "--") && !strings.Contains(arg, "=") {
			if f := lookup(arg[2:]); f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		} else if len(arg) == 2 {
			if f := cc.Flags().ShorthandLookup(arg[1:]); f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	if cc.Annotations == nil {
		cc.Annotations = map[string]string{}
	}
	cc.Annotations[annotMoved] = "true"
	return append(append(flags, "--"), pos...)
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
