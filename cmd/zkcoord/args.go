package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// splitCommand splits the arguments of a command that runs one at "--":
// the positional arguments before it, and the command line after it.
func splitCommand(cmd *cobra.Command, args []string) (pos, command []string) {
	if n := cmd.ArgsLenAtDash(); n >= 0 && n <= len(args) {
		return args[:n], args[n:]
	}
	return args, nil
}

// wantArgs checks that pos holds the named positional arguments, no more
// and no fewer.
func wantArgs(cmd *cobra.Command, pos []string, names ...string) error {
	if len(pos) < len(names) {
		return cli.Usagef("%s: missing %s", cli.Title(cmd), names[len(pos)])
	}
	if len(pos) > len(names) {
		return cli.Usagef("%s: unexpected argument %q", cli.Title(cmd), pos[len(names)])
	}
	return nil
}

// exactly returns the cobra Args of a command that takes the named
// positional arguments.
func exactly(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error { return wantArgs(cmd, args, names...) }
}

// pathArg is the cobra Args of a command that takes a node's PATH.
func pathArg(cmd *cobra.Command, args []string) error {
	if err := wantArgs(cmd, args, "PATH"); err != nil {
		return err
	}
	return checkPath(cmd, args[0])
}

// pathThenCommand is the cobra Args of a command that takes a node's PATH
// and, after "--", a command to run.
func pathThenCommand(cmd *cobra.Command, args []string) error {
	pos, _ := splitCommand(cmd, args)
	return pathArg(cmd, pos)
}

// checkPath reports an invalid ZooKeeper path as a usage error.
func checkPath(cmd *cobra.Command, path string) error {
	if err := zkcoord.ValidatePath(path); err != nil {
		return cli.Usagef("%s: %v", cli.Title(cmd), err)
	}
	return nil
}

// checkGroup reports an invalid group name as a usage error.
func checkGroup(cmd *cobra.Command, group string) error {
	if err := zkcoord.ValidateName(group); err != nil {
		return cli.Usagef("%s: group: %v", cli.Title(cmd), err)
	}
	return nil
}

// subcommandRequired is the RunE of a command that groups subcommands
// (queue put, take, len) and does nothing by itself.
func subcommandRequired(cmd *cobra.Command, args []string) error {
	var subs []string
	for _, sc := range cmd.Commands() {
		subs = append(subs, sc.Name())
	}
	switch {
	case len(args) == 0:
		return cli.Usagef("%s: missing subcommand (one of %s); see 'zkcoord %[1]s --help'", cli.Title(cmd), strings.Join(subs, ", "))
	case args[0] == "help":
		return cmd.Help()
	}
	return cli.Usagef("%s: unknown subcommand %q (want one of %s)", cli.Title(cmd), args[0], strings.Join(subs, ", "))
}

// subcommand is one subcommand of a command that groups them: its usage,
// its name first, and its line in the command's help.
type subcommand struct{ use, short string }

// addSubcommands adds subs to cmd, each checking its arguments with args
// (nil: any) and running run, which tells them apart by cmd.Name(). An rm
// subcommand also answers to remove.
func addSubcommands(cmd *cobra.Command, args cobra.PositionalArgs, run func(cmd *cobra.Command, args []string) error, subs ...subcommand) {
	for _, sub := range subs {
		cmd.AddCommand(&cobra.Command{Use: sub.use, Short: sub.short, Aliases: removeAlias(sub.use), Args: args, RunE: run})
	}
}

// removeAlias gives a command spelled rm its other spelling, remove: one
// name in the help, both accepted.
func removeAlias(use string) []string {
	if strings.HasPrefix(use, "rm ") {
		return []string{"remove"}
	}
	return nil
}

// annotBrief annotates a command with its arguments, shortened, for the
// command list of zkcoord help.
const annotBrief = "brief"

// brief is the Annotations of a command whose arguments the command list
// shows shortened as s.
func brief(s string) map[string]string { return map[string]string{annotBrief: s} }

// completeWords offers words as the values of cmd's flag name in shell
// completion.
func completeWords(cmd *cobra.Command, name string, words ...string) {
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp))
}
