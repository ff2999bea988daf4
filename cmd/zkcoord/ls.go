package main

import (
	"slices"

	"github.com/spf13/cobra"
)

// lsOptions are the flags of ls.
type lsOptions struct {
	recursive bool
	asJSON    bool
}

func newLsCommand(a *app) *cobra.Command {
	var o lsOptions
	cmd := &cobra.Command{
		Use:         "ls PATH [-R] [--json]",
		Short:       "list a node's children, or with -R its subtree",
		Annotations: brief("[-R] PATH"),
		Long: `
List the names of the children of the node at PATH, sorted, one a line. With
-R, list PATH and every node below it by full path, a parent before its
children. On a terminal, a name with control or invisible characters is
shown escaped (see 'zkcoord get').

A missing node exits 1 ("no node PATH"). With -R, a node whose ACL does not
let it be listed is printed, but not what is below it, and zkcoord exits 1
once the rest is printed. With --json, a JSON array of the names (with -R,
of the paths).

Examples:
  zkcoord ls /
  zkcoord ls -R /config
`,
		Args: pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLs(a, args[0], &o)
		},
	}
	fs := cmd.Flags()
	fs.BoolVarP(&o.recursive, "recursive", "R", false, "list PATH and every node below it (-R)")
	fs.BoolVar(&o.asJSON, "json", false, "print a JSON array")
	return cmd
}

func runLs(a *app, path string, o *lsOptions) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	var names []string
	var incomplete error
	if o.recursive {
		// No time limit: a large tree takes many requests. The Session
		// ends the walk if it loses the ensemble; an interrupt ends it too.
		nodes, err := walkTree(a.Ctx, sess, path)
		if err != nil {
			return nodeError("ls", path, err)
		}
		for _, n := range nodes {
			names = append(names, n.Path)
		}
		incomplete = unlisted(nodes)
	} else {
		names, _, err = sess.Children(ctx, path)
		if err != nil {
			return nodeError("ls", path, err)
		}
		slices.Sort(names)
	}
	if o.asJSON {
		if names == nil {
			names = []string{}
		}
		if err := a.printJSON(names); err != nil {
			return err
		}
		return incomplete
	}
	term := isTerminal(a.Stdout)
	for _, n := range names {
		a.printf("%s\n", shownName(n, term))
	}
	return incomplete
}
