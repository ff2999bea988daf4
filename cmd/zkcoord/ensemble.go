package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// ensembleOptions are the flags of ensemble.
type ensembleOptions struct {
	asJSON      bool
	fromVersion string // hex, as show prints it; "" for any
}

func newEnsembleCommand(a *app) *cobra.Command {
	var o ensembleOptions
	cmd := &cobra.Command{
		Use:         "ensemble show|add|remove|set [SERVER...|ID...]",
		Short:       "read or change the ensemble's membership (zkCli.sh's config and reconfig)",
		Annotations: brief("show|add|remove|set"),
		Long: `
  ensemble show               the members: id, role, client, quorum and election addresses, version
  ensemble add SERVER...      add servers, or change members (incremental reconfig, joining)
  ensemble remove ID...       remove the members with these ids (incremental reconfig, leaving)
  ensemble set SERVER...      make these servers the whole membership (non-incremental reconfig)

The membership is what the ensemble publishes in /zookeeper/config
(ZooKeeper 3.5 and later), read outside any chroot; a standalone server
publishes none. A SERVER is a line as that node holds it:

  server.ID=HOST:QUORUM_PORT:ELECTION_PORT[:participant|observer][;[CLIENT_HOST:]CLIENT_PORT]

add, remove and set print the new membership, as show does. With
--from-version V (the version show prints, in hex), the change applies only
if the membership is still at version V, so that two operators do not undo
each other's changes. A new server must be running, configured with the
current members and itself, before it is added.

Changing the membership needs servers started with reconfigEnabled=true and
write permission on /zookeeper/config, which ZooKeeper gives to its super
user only (--auth super:PASSWORD, the servers having
zookeeper.DigestAuthenticationProvider.superDigest set) unless an ACL set on
that node grants it (or the servers skip ACL checks). The ensemble refuses a
change while another one is committed, and until a quorum of the new
membership is connected to the leader: zkcoord exits 1 saying so, and trying
again later is safe. A change whose answer is lost with the connection may
or may not have happened (a server leaving drops its clients): zkcoord
reads the membership again and succeeds only if it shows the change.

Examples:
  zkcoord ensemble show --zk zk1:2181
  zkcoord ensemble add 'server.4=zk4:2888:3888:participant;2181' --auth super:secret
  zkcoord ensemble remove 4 --from-version 100000003 --auth super:secret
`,
		RunE: subcommandRequired,
	}
	fs := cmd.PersistentFlags()
	fs.BoolVar(&o.asJSON, "json", false, "print a JSON object: version (hex) and members")
	fs.StringVar(&o.fromVersion, "from-version", "", "add, remove, set: change the membership only if it is at this `version` (hex, as show prints it)")
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "the members: id, role, client, quorum and election addresses, version",
		Args:  exactly(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("from-version") {
				return cli.Usagef("ensemble show: --from-version is for add, remove and set")
			}
			return runEnsemble(a, &o, nil)
		},
	}, &cobra.Command{
		Use:   "add SERVER...",
		Short: "add servers, or change members (incremental reconfig, joining)",
		Args:  serverLines,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEnsemble(a, &o, &zkcoord.Reconfig{Joining: args})
		},
	}, &cobra.Command{
		Use:   "remove ID...",
		Short: "remove the members with these ids (incremental reconfig, leaving)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return wantArgs(cmd, args, "ID")
			}
			for _, s := range args {
				if id, err := strconv.ParseInt(s, 10, 64); err != nil || id < 0 {
					return cli.Usagef("%s: %q: want a server id (the N of server.N)", cli.Title(cmd), s)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			r := &zkcoord.Reconfig{}
			for _, s := range args {
				id, _ := strconv.ParseInt(s, 10, 64)
				r.Leaving = append(r.Leaving, id)
			}
			return runEnsemble(a, &o, r)
		},
	}, &cobra.Command{
		Use:   "set SERVER...",
		Short: "make these servers the whole membership (non-incremental reconfig)",
		Args:  serverLines,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEnsemble(a, &o, &zkcoord.Reconfig{Members: args})
		},
	})
	return cmd
}

// serverLines are the cobra Args of a command that takes member lines.
func serverLines(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return wantArgs(cmd, args, "SERVER")
	}
	for _, line := range args {
		if c, err := zkcoord.ParseEnsembleConfig(line); err != nil || len(c.Members) != 1 || strings.ContainsAny(line, ",\n") {
			return cli.Usagef("%s: %q: want server.ID=HOST:QUORUM_PORT:ELECTION_PORT[:ROLE][;[CLIENT_HOST:]CLIENT_PORT]", cli.Title(cmd), line)
		}
	}
	return nil
}

// ensembleJSON is the --json form of a membership.
type ensembleJSON struct {
	Version string       `json:"version"` // hex, as /zookeeper/config writes it
	Members []memberJSON `json:"members"`
}

type memberJSON struct {
	ID       int64  `json:"id"`
	Role     string `json:"role"`
	Client   string `json:"client,omitempty"`
	Quorum   string `json:"quorum"`
	Election string `json:"election"`
	Line     string `json:"line"` // as add and set take it
}

// runEnsemble shows the membership, after changing it as r says if r is
// not nil.
func runEnsemble(a *app, o *ensembleOptions, r *zkcoord.Reconfig) error {
	if r != nil && o.fromVersion != "" {
		v, err := strconv.ParseUint(strings.TrimPrefix(o.fromVersion, "0x"), 16, 63)
		if err != nil || v == 0 {
			return cli.Usagef("--from-version: %q: want the version ensemble show prints (hex, like 100000003)", o.fromVersion)
		}
		r.FromVersion = int64(v)
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	var c zkcoord.EnsembleConfig
	if r == nil {
		c, err = sess.EnsembleConfig(ctx)
		if err != nil {
			return nodeError("ensemble show: read", zkcoord.ConfigNode, err)
		}
	} else if c, err = sess.Reconfig(ctx, *r); err != nil {
		if !errors.Is(err, zkcoord.ErrConnectionClosed) {
			return reconfigError(ctx, sess, r, err)
		}
		// The server that took the request may have dropped its clients
		// with the answer (one leaving the ensemble does): read again.
		if c, err = sess.EnsembleConfig(ctx); err != nil || !applied(r, c) {
			return errors.New("the connection was lost before the ensemble answered, and the membership read again does not show the change (yet): see zkcoord ensemble show before trying again")
		}
		fmt.Fprintf(a.Stderr, "zkcoord: the connection was lost with the answer; the membership read again shows the change\n")
	}
	return a.printEnsemble(c, o.asJSON)
}

// applied reports whether c shows the change r.
func applied(r *zkcoord.Reconfig, c zkcoord.EnsembleConfig) bool {
	byID := map[int64]zkcoord.EnsembleMember{}
	for _, m := range c.Members {
		byID[m.ID] = m
	}
	for _, id := range r.Leaving {
		if _, ok := byID[id]; ok {
			return false
		}
	}
	lines := slices.Concat(r.Joining, r.Members)
	if len(r.Members) > 0 && len(r.Members) != len(c.Members) {
		return false
	}
	for _, line := range lines {
		want, err := zkcoord.ParseEnsembleConfig(line)
		if err != nil || len(want.Members) != 1 || byID[want.Members[0].ID] != want.Members[0] {
			return false
		}
	}
	return r.FromVersion == 0 || c.Version != r.FromVersion
}

// reconfigError says why the ensemble refused r, and what to do.
func reconfigError(ctx context.Context, sess *zkcoord.Session, r *zkcoord.Reconfig, err error) error {
	switch {
	case errors.Is(err, zkcoord.ErrReconfigDisabled):
		return errors.New("the ensemble does not allow changing its membership: its servers run without reconfigEnabled=true, or standalone")
	case errors.Is(err, zkcoord.ErrNewConfigNoQuorum):
		return errors.New("no quorum of the new membership is connected to the leader yet: start the new servers with the current members in their configuration, let them catch up, and try again")
	case errors.Is(err, zkcoord.ErrReconfigInProgress):
		return errors.New("another change of the membership is being committed: try again")
	case errors.Is(err, zkcoord.ErrNoAuth):
		return fmt.Errorf("not allowed to change the membership: it needs write permission on %s, which ZooKeeper gives to its super user only (--auth super:PASSWORD with the servers' superDigest) unless an ACL on %s grants it",
			zkcoord.ConfigNode, zkcoord.ConfigNode)
	case errors.Is(err, zkcoord.ErrBadVersion):
		if c, cerr := sess.EnsembleConfig(ctx); cerr == nil {
			return fmt.Errorf("the membership is at version %x, not %x: nothing changed; see zkcoord ensemble show", c.Version, r.FromVersion)
		}
		return fmt.Errorf("the membership is not at version %x: nothing changed; see zkcoord ensemble show", r.FromVersion)
	case errors.Is(err, zkcoord.ErrBadArguments):
		return fmt.Errorf("the ensemble refused the change (a server listed twice, an id unknown, or no member left?): %w", err)
	}
	return err
}

// printEnsemble prints c as a table, or with asJSON as JSON.
func (a *app) printEnsemble(c zkcoord.EnsembleConfig, asJSON bool) error {
	if asJSON {
		out := ensembleJSON{Version: strconv.FormatInt(c.Version, 16), Members: []memberJSON{}}
		for _, m := range c.Members {
			out.Members = append(out.Members, memberJSON{ID: m.ID, Role: m.Role, Client: m.ClientAddr,
				Quorum: m.QuorumAddr, Election: m.ElectionAddr, Line: m.String()})
		}
		return a.printJSON(out)
	}
	if len(c.Members) == 0 {
		fmt.Fprintf(a.Stderr, "zkcoord: %s lists no members: a standalone server\n", zkcoord.ConfigNode)
		return nil
	}
	tw := cli.Table(a.Stdout)
	fmt.Fprintln(tw, "ID\tROLE\tCLIENT\tQUORUM\tELECTION")
	for _, m := range c.Members {
		client := m.ClientAddr
		if client == "" {
			client = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", m.ID, m.Role, client, m.QuorumAddr, m.ElectionAddr)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	a.printf("version %x\n", c.Version)
	return nil
}
