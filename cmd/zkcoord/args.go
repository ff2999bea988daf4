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
//     unless it is the value of the flag before it: for commands that take
//     numbers (annotNumbers), the arguments then move after a "--", where
//     cobra takes everything as an argument.
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
	path := strings.Fields(cc.CommandPath())[1:] // the command's words after "zkcoord"
	out := make([]string, 0, len(args)+1)
	var moved []string
	numbers := cc.Annotations[annotNumbers] != ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			if len(moved) > 0 {
				return append(append(append(out, "--"), moved...), args[i+1:]...)
			}
			return append(out, args[i:]...)
		}
		switch {
		case isNegativeNumber(arg):
			if numbers {
				moved = append(moved, arg)
			} else {
				out = append(out, arg)
			}
			continue
		case len(arg) > 2 && arg[0] == '-' && arg[1] != '-':
			name, _, _ := strings.Cut(arg[1:], "=")
			if len(name) > 1 && lookup(name) != nil {
				arg = "-" + arg
			}
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if len(path) > 0 && arg == path[0] && len(moved) == 0 {
				path = path[1:]
				out = append(out, arg)
			} else if numbers {
				moved = append(moved, arg)
			} else {
				out = append(out, arg)
			}
			continue
		}
		out = append(out, arg)
		// A flag that takes a value takes the next argument, whatever it is.
		if strings.HasPrefix(arg, "--") && !strings.Contains(arg, "=") {
			if f := lookup(arg[2:]); f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		} else if len(arg) == 2 {
			if f := cc.Flags().ShorthandLookup(arg[1:]); f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		}
	}
	if len(moved) > 0 {
		out = append(append(out, "--"), moved...)
	}
	return out
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
