package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// newRootCommand builds the command tree of a: zkcoord and every command
// below it.
func newRootCommand(a *app) *cobra.Command {
	cobra.EnableCommandSorting = false // the order of a.commands()
	root := &cobra.Command{
		Use:           "zkcoord",
		Short:         "coordinate processes through Apache ZooKeeper",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cli.NoArgs("unknown command"),
		RunE: func(cc *cobra.Command, _ []string) error {
			printHelp(cc, a.Stderr)
			return cli.Usagef("missing command")
		},
	}
	a.Prepare(root)
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(cc *cobra.Command, args []string) {
		switch {
		case cc == root:
			printHelp(cc, cc.OutOrStdout())
		case cc.DisableFlagParsing: // the program it runs shows the help
			if err := cc.RunE(cc, []string{"--help"}); err != nil {
				fmt.Fprintf(a.Stderr, "zkcoord: %v\n", err)
			}
		case topCommand(cc).Name() == "completion":
			defaultHelp(cc, args)
		default:
			cli.PrintCommandHelp(cli.DocCommand(cc), cc.OutOrStdout())
		}
	})
	completeWords(root, "log-level", "debug", "info", "warn", "error")
	completeWords(root, "log-format", "text", "json")
	completeWords(root, "acl", "open", "creator")
	root.AddCommand(a.commands()...)
	addCompletions(a, root)
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [COMMAND]",
		Short: "help about a command",
		RunE: func(_ *cobra.Command, args []string) error {
			cc, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return cli.Usagef("unknown command %q", strings.Join(args, " "))
			}
			return cc.Help()
		},
	})
	root.InitDefaultCompletionCmd()
	return root
}

// commands returns every command, in the order of the help.
func (a *app) commands() []*cobra.Command {
	return []*cobra.Command{
		newLockCommand(a),
		newElectCommand(a),
		newLeaderCommand(a),
		newRebalanceCommand(a),
		newResourcesCommand(a),
		newStatusCommand(a),
		newBarrierCommand(a),
		newQueueCommand(a),
		newCounterCommand(a),
		newLocksCommand(a),
		newElectionCommand(a),
		newWatchCommand(a),
		newLsCommand(a),
		newGetCommand(a),
		newStatCommand(a),
		newSetCommand(a),
		newCreateCommand(a),
		newRmCommand(a),
		newACLCommand(a),
		newWhoAmICommand(a),
		newEphemeralsCommand(a),
		newServerCommand(a),
		newEnsembleCommand(a),
		newServicesCommand(a),
		newUICommand(a),
		newDemoCommand(a),
	}
}

// topCommand returns the command right below the root that cc is, or
// belongs to.
func topCommand(cc *cobra.Command) *cobra.Command {
	for cc.HasParent() && cc.Parent().HasParent() {
		cc = cc.Parent()
	}
	return cc
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
"--" is the command that zkcoord runs. An argument that starts with "-",
like a negative number, goes after "--" too: zkcoord counter add /c -- -5.

Commands:
`)
	var lines []string
	for _, cc := range root.Commands() {
		if cc.Hidden || cc.Name() == "help" {
			continue
		}
		brief, short := cc.Annotations[annotBrief], cc.Short
		if cc.Name() == "completion" {
			// cobra's own command, whose Short is capitalized unlike the others.
			brief, short = "bash|zsh|fish|powershell", "print the completion script of a shell"
		}
		lines = append(lines, fmt.Sprintf("  %s %s\t%s", cc.Name(), brief, short))
	}
	cli.PrintLines(w, lines)
	cli.PrintCommonFlags(w, root.PersistentFlags(), "Connection (accepted by every command; flags override the environment):", true)
	fmt.Fprint(w, `
Environment of the commands zkcoord runs:
  ZKCOORD_TOKEN     fencing token (creation zxid of the lock, leader or barrier node):
                    larger for every later owner; pass it to the resource
  ZKCOORD_PATH      the lock or election path, or the group's path
  ZKCOORD_ID        participant id (elect) or client id in the group (rebalance)
  ZKCOORD_RESOURCE  the resource (rebalance)
  ZKCOORD_TERM, ZKCOORD_GROUP, ZKCOORD_GENERATION, ZKCOORD_NODE: see each command

Shell completion: see 'zkcoord completion --help'. It offers the commands,
their flags and the values of those that take a fixed set, and asks the
server for node paths, groups, resources and services.

Exit codes:
  0  success
  1  failure: cannot connect, an operation failed, a child could not be kept running
  2  usage error: bad flags or arguments
  3  the lock or leadership was lost (the command run under it was stopped)
  When a command run by zkcoord ends by itself, zkcoord exits with its status.
`)
}
