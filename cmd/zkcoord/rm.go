package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/internal/tree"
)

// rmOptions are the flags of rm.
type rmOptions struct {
	recursive bool
	version   int32
	yes       bool
	asJSON    bool
}

func newRmCommand(a *app) *cobra.Command {
	var o rmOptions
	cmd := &cobra.Command{
		Use:         "rm [-r] PATH [--version N] [--yes] [--json]",
		Aliases:     removeAlias("rm "),
		Short:       "delete a node, or a subtree with -r",
		Annotations: brief("[-r] PATH"),
		Long: `
Delete the node at PATH. A node with children is not deleted (exit 1): -r
deletes PATH and every node below it, children before their parents, in
transactions of up to 500 nodes, and prints how many nodes it deleted.

Before a recursive delete zkcoord counts the nodes and asks, on a terminal,
whether to delete them (anything but "y" or "yes" deletes nothing and exits
1). When standard input is not a terminal it cannot ask: give --yes, or
nothing is deleted (exit 2). If the delete stops part way (a node whose ACL
forbids deleting its children, a lost connection, an interrupt), zkcoord says
how many nodes it deleted before it stopped and exits 1; the rest is still
there. rm -r refuses "/".

With --version N, plain rm deletes the node only if its data version is N.
A missing node exits 1 ("no node PATH"). With --json, an object with the
path and the number of nodes deleted.

Examples:
  zkcoord rm /config/old
  zkcoord rm -r /jobs/2023 --yes
`,
		Args: pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkVersion(cmd, o.version); err != nil {
				return err
			}
			if o.recursive && cmd.Flags().Changed("version") {
				return cli.Usagef("rm: --version is for a single node, not with -r")
			}
			return runRm(a, args[0], &o)
		},
	}
	fs := cmd.Flags()
	fs.BoolVarP(&o.recursive, "recursive", "r", false, "delete PATH and every node below it (-r)")
	fs.Int32Var(&o.version, "version", anyVersion, "delete only if the node's data version is `n`")
	fs.BoolVar(&o.yes, "yes", false, "with -r, delete without asking")
	fs.BoolVar(&o.asJSON, "json", false, "print a JSON object: path and the number of nodes deleted")
	return cmd
}

// deletedJSON is the --json form of rm's result.
type deletedJSON struct {
	Path    string `json:"path"`
	Deleted int    `json:"deleted"`
}

func runRm(a *app, path string, o *rmOptions) error {
	if !o.recursive {
		return runRmNode(a, path, o)
	}
	if path == "/" {
		return cli.Usagef("rm: refusing to delete / and everything below it")
	}
	if !o.yes && !isTerminal(os.Stdin) {
		return cli.Usagef("rm -r: nothing deleted: deleting %s and everything below it needs --yes when standard input is not a terminal", path)
	}
	sess, err := a.open()
	if err != nil {
		return err
	}
	defer cli.CloseSession(sess)
	ctx, cancel := a.opContext(sess)
	defer cancel()
	if _, err := stat(ctx, sess, path); err != nil {
		return nodeError("rm", path, err)
	}
	below, err := sess.CountDescendants(ctx, path)
	if err != nil {
		return nodeError("rm", path, err)
	}
	if !o.yes {
		if !confirm(a, fmt.Sprintf("Delete %s and the %s below it?", path, plural(below, "node"))) {
			return errors.New("nothing deleted")
		}
	}
	// No time limit: a large tree takes many requests. The Session ends
	// the delete if it loses the ensemble; an interrupt ends it too.
	deleted, err := tree.DeleteAll(a.Ctx, sess, path)
	switch {
	case err != nil && a.Ctx.Err() != nil:
		return fmt.Errorf("rm -r %s: interrupted after deleting %s; the rest is still there", path, plural(deleted, "node"))
	case err != nil:
		return fmt.Errorf("rm -r %s: deleted %d of the %d nodes counted, then stopped; the rest is still there: %w",
			path, deleted, below+1, cause(err))
	case o.asJSON:
		return a.printJSON(deletedJSON{Path: path, Deleted: deleted})
	}
	a.printf("deleted %s\n", plural(deleted, "node"))
	return nil
}

// runRmNode deletes a single node.
func runRmNode(a *app, path string, o *rmOptions) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	err = sess.Delete(ctx, path, o.version)
	switch {
	case errors.Is(err, zkcoord.ErrNotEmpty):
		n := "children"
		if ok, st, err := sess.Exists(ctx, path); err == nil && ok {
			n = plural(int(st.NumChildren), "child")
		}
		return fmt.Errorf("rm %s: it has %s: 'zkcoord rm -r' deletes it and everything below it", path, n)
	case errors.Is(err, zkcoord.ErrBadVersion):
		return versionError("rm", path, "data version", o.version, func() (int32, error) {
			ok, st, err := sess.Exists(ctx, path)
			if err != nil || !ok {
				return 0, zkcoord.ErrNoNode
			}
			return st.Version, nil
		})
	case err != nil:
		return nodeError("rm", path, err)
	case o.asJSON:
		return a.printJSON(deletedJSON{Path: path, Deleted: 1})
	}
	return nil
}

// confirm asks question on the terminal and reports whether the answer is
// yes. An interrupt while it waits is a no.
func confirm(a *app, question string) bool {
	fmt.Fprintf(a.Stderr, "%s [y/N] ", question)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case <-a.Ctx.Done():
		fmt.Fprintln(a.Stderr)
		return false
	case line := <-answer:
		s := strings.ToLower(strings.TrimSpace(line))
		return s == "y" || s == "yes"
	}
}

// plural returns "1 node", "2 nodes": n and the noun, in the plural unless
// n is 1 ("child" becomes "children").
func plural(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case noun == "child":
		return fmt.Sprintf("%d children", n)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
