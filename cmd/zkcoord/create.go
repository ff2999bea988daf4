package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// createOptions are the flags of create.
type createOptions struct {
	ephemeral  bool
	sequential bool
	ttl        time.Duration
	parents    bool
	asJSON     bool
}

func newCreateCommand(a *app) *cobra.Command {
	var o createOptions
	cmd := &cobra.Command{
		Use:         "create PATH [DATA|-] [--parents] [--sequential] [--ephemeral | --ttl DURATION] [--json]",
		Short:       "create a node",
		Annotations: brief("PATH [DATA|-]"),
		Long: `
Create the node at PATH with DATA (none if not given; with "-", all of
standard input, as it is) and print its path: with --sequential the server
appends a ten-digit sequence number to the name, and the path printed is the
one created. The node gets the ACL that --acl says (open, or creator: only
the user of --auth). Data that starts with "-" goes after "--".

The parent must exist: --parents creates the missing ancestors first (empty
and persistent, like 'mkdir -p'); the node itself must not exist, with or
without it. A node that exists exits 1 ("PATH already exists"), as does a
missing parent. Under a chroot that does not exist, --parents creates the
chroot too; every other command, create without --parents included, fails
naming it.

An ephemeral node lives as long as the session that created it, so with
--ephemeral zkcoord keeps its session, and the node, until it is interrupted
(SIGINT or SIGTERM: exit 0, the node is deleted as the session closes); if
the session ends first, the node is gone and zkcoord exits 3.

--ttl makes a persistent node that the server deletes once it has had no
children and no change for that long; the server must allow it
(zookeeper.extendedTypesEnabled=true). Container nodes are not offered here.

With --json, an object with the path created and its stat (no stat with
--ttl).

Examples:
  zkcoord create /config/app 'mode=fast' --parents
  zkcoord create /jobs/job- - --sequential < job.json
  zkcoord create /workers/w1 --ephemeral    # until interrupted
`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return pathArg(cmd, args)
			}
			if err := wantArgs(cmd, args, "PATH", "DATA"); err != nil {
				return err
			}
			return checkPath(cmd, args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			data := ""
			if len(args) == 2 {
				data = args[1]
			}
			return runCreate(a, args[0], data, &o)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.parents, "parents", false, "create the missing ancestors first (persistent, no data)")
	fs.BoolVar(&o.sequential, "sequential", false, "append a sequence number to the name; print the path created")
	fs.BoolVar(&o.ephemeral, "ephemeral", false, "an ephemeral node: hold it until interrupted")
	fs.DurationVar(&o.ttl, "ttl", 0, "a persistent node the server deletes once unchanged and childless for this `duration`")
	fs.BoolVar(&o.asJSON, "json", false, "print a JSON object: the path created and its stat")
	return cmd
}

// createdJSON is the --json form of create's result.
type createdJSON struct {
	Path string    `json:"path"`
	Stat *statJSON `json:"stat,omitempty"`
}

func runCreate(a *app, path, arg string, o *createOptions) error {
	if path == "/" {
		return cli.Usagef("create: / always exists")
	}
	if o.ttl != 0 {
		switch {
		case o.ephemeral:
			return cli.Usagef("create: --ttl and --ephemeral exclude each other (a TTL node is persistent)")
		case o.ttl < time.Millisecond || o.ttl > zkcoord.MaxTTL:
			return cli.Usagef("create: --ttl must be between 1ms and %v", zkcoord.MaxTTL)
		}
	}
	data, err := dataArg(arg, os.Stdin)
	if err != nil {
		return err
	}
	if err := a.Setup(); err != nil {
		return err
	}
	cfg, err := a.Conn.Config()
	if err != nil {
		return err
	}
	// --parents creates a missing chroot too, as it creates the path's
	// other ancestors.
	cfg.ChrootMustExist = !o.parents
	sess, err := a.ConnectConfig(a.Ctx, cfg)
	if err != nil {
		return err
	}
	defer cli.CloseSession(sess)
	ctx, cancel := a.opContext(sess)
	defer cancel()
	parent := zkcoord.Parent(path)
	if o.parents && parent != "/" {
		if err := sess.EnsurePath(ctx, parent); err != nil {
			return nodeError("create", parent, err)
		}
	}
	flags := zkcoord.FlagPersistent
	if o.sequential {
		flags |= zkcoord.FlagSequence
	}
	if o.ephemeral {
		flags |= zkcoord.FlagEphemeral
	}
	var (
		created string
		st      *zkcoord.Stat
	)
	if o.ttl > 0 {
		created, err = sess.CreateTTL(ctx, path, data, flags, o.ttl)
	} else {
		created, st, err = sess.CreateWithStat(ctx, path, data, flags)
	}
	switch {
	case errors.Is(err, zkcoord.ErrNodeExists):
		return fmt.Errorf("%s already exists", path)
	case errors.Is(err, zkcoord.ErrNoNode):
		return fmt.Errorf("no node %s, the parent of %s (--parents creates it)", parent, path)
	case errors.Is(err, zkcoord.ErrNoChildrenForEphemerals):
		return fmt.Errorf("create %s: %s is ephemeral and cannot have children", path, parent)
	case errors.Is(err, zkcoord.ErrTTLDisabled):
		return fmt.Errorf("create %s: the server does not accept TTL nodes (it needs zookeeper.extendedTypesEnabled=true)", path)
	case err != nil:
		return nodeError("create", path, err)
	}
	if o.asJSON {
		if err := a.printJSON(createdJSON{Path: created, Stat: toStatJSON(st)}); err != nil {
			return err
		}
	} else {
		a.printf("%s\n", created)
	}
	if !o.ephemeral {
		return nil
	}
	cancel()
	a.Log.Info("holding the ephemeral node until interrupted", "path", created, "session", sessionID(sess.ID()))
	select {
	case <-a.Ctx.Done():
		return nil
	case <-sess.Done():
		return cli.Lostf("the session ended, and the ephemeral node %s with it: %v", created, sess.Err())
	}
}
