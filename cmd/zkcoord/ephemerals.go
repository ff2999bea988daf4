package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// ephemeralsOptions are the flags of ephemerals.
type ephemeralsOptions struct {
	session string
	asJSON  bool
}

func newEphemeralsCommand(a *app) *cobra.Command {
	var o ephemeralsOptions
	cmd := &cobra.Command{
		Use:         "ephemerals [PATH] [--session ID] [--json]",
		Short:       "list the ephemeral nodes of a subtree and the sessions that own them",
		Annotations: brief("[PATH]"),
		Long: `
List every ephemeral node at or below PATH (default /), by path, with the
session that owns it: the nodes that go away when that session ends, such as
lock holders, election candidates, group members and registered services.
With --session, only those of that session (in hex, 0x..., as listed, or in
decimal).

ZooKeeper's own getEphemerals (zkCli.sh's getEphemerals) lists only the
ephemerals of the session that asks, and zkcoord's session is new, so this
command walks the subtree instead: one request per node, many in flight.
Nodes whose ACL does not let them be listed are left out, and zkcoord then
exits 1 once the rest is printed. With --json, a JSON array of objects with
the path and the session.

Example:
  zkcoord ephemerals /services
`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return pathArg(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/"
			if len(args) > 0 {
				path = args[0]
			}
			return runEphemerals(a, path, &o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.session, "session", "", "list only the ephemerals of the session `id`")
	fs.BoolVar(&o.asJSON, "json", false, "print a JSON array")
	return cmd
}

// ephemeralJSON is the --json form of an ephemeral node.
type ephemeralJSON struct {
	Path    string `json:"path"`
	Session string `json:"session"`
}

func runEphemerals(a *app, path string, o *ephemeralsOptions) error {
	var only int64
	if o.session != "" {
		id, err := strconv.ParseInt(o.session, 0, 64)
		if err != nil || id == 0 {
			return cli.Usagef("ephemerals: --session: want a session id like 0x1000a2b3c4d0005, not %q", o.session)
		}
		only = id
	}
	sess, err := a.open()
	if err != nil {
		return err
	}
	defer cli.CloseSession(sess)
	// No time limit, as for ls -R.
	nodes, err := walkTree(a.Ctx, sess, path)
	if err != nil {
		return nodeError("ephemerals", path, err)
	}
	found := []ephemeralJSON{}
	for _, n := range nodes {
		if n.Stat == nil || !ownedBySession(n.Stat.EphemeralOwner) || only != 0 && n.Stat.EphemeralOwner != only {
			continue
		}
		found = append(found, ephemeralJSON{Path: n.Path, Session: sessionID(n.Stat.EphemeralOwner)})
	}
	if o.asJSON {
		if err := a.printJSON(found); err != nil {
			return err
		}
		return unlisted(nodes)
	}
	if len(found) > 0 {
		term := isTerminal(a.Stdout)
		tw := cli.Table(a.Stdout)
		fmt.Fprintln(tw, "NODE\tSESSION")
		for _, e := range found {
			fmt.Fprintf(tw, "%s\t%s\n", shownName(e.Path, term), e.Session)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return unlisted(nodes)
}

// ownedBySession tells whether a node's ephemeralOwner is a session: not 0
// (a persistent node), nor the marks of ZooKeeper's extended types, which
// keep it there: a container (the lowest int64) or a TTL node (0xff in the
// top byte, the TTL below).
func ownedBySession(owner int64) bool {
	return owner != 0 && owner != math.MinInt64 && owner>>56 != -1
}
