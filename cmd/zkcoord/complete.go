package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/rebalance"
)

// Shell completion offers, for each positional argument, what it takes, as
// the command's usage line names it: the nodes of the server for a PATH or
// a BASE, the groups for a GROUP, a group's registered resources for the
// RESOURCE of resources rm, the services under BASE for a NAME; nothing
// (and no file names) for the others. Flags with a fixed set of values
// offer those (completeWords), and --root and --chroot offer nodes.

// completeTimeout bounds the connection and the reads of one completion:
// a shell waits for it.
const completeTimeout = 2 * time.Second

// addCompletions gives every command below root the completion of its
// arguments and of its path flags.
func addCompletions(a *app, root *cobra.Command) {
	var walk func(cc *cobra.Command)
	walk = func(cc *cobra.Command) {
		for _, sub := range cc.Commands() {
			walk(sub)
		}
		if cc == root || cc.DisableFlagParsing {
			return
		}
		names := argNames(cc.Use)
		cc.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return completeArg(a, cmd, names, args, toComplete)
		}
		for _, flag := range []string{"root", "limit-from"} {
			if cc.Flags().Lookup(flag) != nil || cc.InheritedFlags().Lookup(flag) != nil {
				_ = cc.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
					return completeNodes(a, toComplete)
				})
			}
		}
	}
	walk(root)
	_ = root.RegisterFlagCompletionFunc("chroot", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		a.Conn.Chroot = "" // the chroot is looked for from the root
		return completeNodes(a, toComplete)
	})
}

// argNames returns the names of the positional arguments of a command's
// usage line ("rm [-r] PATH [--version N]" gives PATH), up to its first
// flag with a value or its "--"; a name followed by "..." repeats.
func argNames(use string) []string {
	var names []string
	for _, tok := range strings.Fields(use)[1:] {
		switch {
		case strings.HasPrefix(tok, "[-") && strings.HasSuffix(tok, "]"): // a flag alone: [-r]
			continue
		case strings.HasPrefix(tok, "-") || strings.HasPrefix(tok, "[-") || tok == "|" || tok == "or":
			return names
		}
		name, _, _ := strings.Cut(strings.Trim(tok, "[]"), "|")
		names = append(names, name)
	}
	return names
}

// completeArg completes the argument after args, of the command whose
// arguments are names.
func completeArg(a *app, cmd *cobra.Command, names, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(names) == 0 || afterDash(a.Args) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	name := names[min(len(args), len(names)-1)]
	if len(args) >= len(names) && !strings.HasSuffix(name, "...") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	switch strings.TrimSuffix(name, "...") {
	case "PATH", "BASE":
		return completeNodes(a, toComplete)
	case "GROUP":
		return completeChildren(a, groupsRoot(cmd), toComplete)
	case "RESOURCE":
		if cmd.Name() == "rm" && len(args) > 0 {
			words, dir := completeChildren(a, zkcoord.Join(groupsRoot(cmd), args[0], "resources"), toComplete)
			return slices.DeleteFunc(words, func(w string) bool { return slices.Contains(args[1:], w) }), dir
		}
	case "NAME":
		if topCommand(cmd).Name() == "services" && len(args) > 0 {
			return completeChildren(a, args[0], toComplete)
		}
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// afterDash reports whether the word completed by the completion command
// line args ("__complete", words..., the word) comes after "--": it is
// part of the command to run, not an argument. (cobra's flag parsing
// during completion leaves ArgsLenAtDash set either way.)
func afterDash(args []string) bool {
	return len(args) > 2 && slices.Contains(args[1:len(args)-1], "--")
}

// groupsRoot returns where the groups of cmd live: its --root.
func groupsRoot(cmd *cobra.Command) string {
	if f := cmd.Flag("root"); f != nil {
		return f.Value.String()
	}
	return rebalance.DefaultRoot
}

// completeNodes completes toComplete as a node's path: the children of
// the node it ends in, whose names start as its last element does.
func completeNodes(a *app, toComplete string) ([]string, cobra.ShellCompDirective) {
	const dir = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	if toComplete == "" {
		toComplete = "/"
	}
	if !strings.HasPrefix(toComplete, "/") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	i := strings.LastIndex(toComplete, "/")
	parent, prefix := toComplete[:i], toComplete[i+1:]
	if parent == "" {
		parent = "/"
	}
	var out []string
	_ = withSession(a, func(ctx context.Context, sess *zkcoord.Session) error {
		kids, _, err := sess.Children(ctx, parent)
		for _, k := range kids {
			if strings.HasPrefix(k, prefix) {
				out = append(out, zkcoord.Join(parent, k))
			}
		}
		return err
	})
	slices.Sort(out)
	return out, dir
}

// completeChildren offers the names of the children of parent that start
// with toComplete.
func completeChildren(a *app, parent, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	_ = withSession(a, func(ctx context.Context, sess *zkcoord.Session) error {
		kids, _, err := sess.Children(ctx, parent)
		for _, k := range kids {
			if strings.HasPrefix(k, toComplete) {
				out = append(out, k)
			}
		}
		return err
	})
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// withSession runs f on a Session opened as the connection flags say,
// bounded by completeTimeout; a completion that cannot reach ZooKeeper
// offers nothing, silently.
func withSession(a *app, f func(ctx context.Context, sess *zkcoord.Session) error) error {
	cfg, err := a.Conn.Config()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, completeTimeout)
	defer cancel()
	sess, err := cli.Connect(ctx, cfg, completeTimeout, a.Log)
	if err != nil {
		return err
	}
	defer cli.CloseSession(sess)
	return f(ctx, sess)
}
