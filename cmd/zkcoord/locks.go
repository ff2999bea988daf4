package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/lock"
)

func newLocksCommand(a *app) *cobra.Command {
	var (
		kind   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:         "locks ls PATH [--kind mutex|rwlock|semaphore] [--json]",
		Short:       "list the holders and waiters of a lock",
		Annotations: brief("ls PATH"),
		Long: `
  locks ls PATH   list who holds the lock at PATH and who waits for it

Each line shows whether the contender holds or waits, its node, its fencing
token (the node's creation zxid), the session that owns it, when it came and
the data it wrote (zkcoord writes host:pid or --data; Curator its IP address).
Curator's and Kazoo's contenders are listed too. --kind says which recipe the
lock is: a mutex (lock PATH), the read-write lock (lock --read or --write
PATH) or a semaphore (lock --limit N PATH); for a semaphore the waiters are
the acquirers in line for a lease. Without --kind, an empty list of a path
that has children says so on stderr.

Example:
  zkcoord locks ls /locks/nightly-report --json
`,
		RunE: subcommandRequired,
	}
	fs := cmd.PersistentFlags()
	fs.StringVar(&kind, "kind", "mutex", "the lock's `kind`: mutex, rwlock or semaphore")
	fs.BoolVar(&asJSON, "json", false, "print a JSON array")
	completeWords(cmd, "kind", "mutex", "rwlock", "semaphore")
	cmd.AddCommand(&cobra.Command{
		Use:   "ls PATH",
		Short: "list who holds the lock and who waits for it",
		Args:  pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLocks(a, args[0], kind, cmd.Flags().Changed("kind"), asJSON)
		},
	})
	return cmd
}

// contenderJSON is the --json form of a lock contender.
type contenderJSON struct {
	Node    string    `json:"node"`
	Holds   bool      `json:"holds"`
	Writer  bool      `json:"writer"`
	Token   int64     `json:"token"`
	Session string    `json:"session"`
	Since   time.Time `json:"since"`
	Data    string    `json:"data"`
}

func toContenderJSON(c lock.Contender) contenderJSON {
	return contenderJSON{Node: c.Path, Holds: c.Holds, Writer: c.Writer, Token: c.Token,
		Session: fmt.Sprintf("0x%x", c.Session), Since: c.Since, Data: string(c.Data)}
}

func runLocks(a *app, path, kind string, kindGiven, asJSON bool) error {
	switch kind {
	case "mutex", "rwlock", "semaphore":
	default:
		return cli.Usagef("locks: --kind: want mutex, rwlock or semaphore, not %q", kind)
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	cs, err := contenders(ctx, sess, path, kind)
	if err != nil {
		return fmt.Errorf("listing the contenders of %s: %w", path, err)
	}
	if len(cs) == 0 && !kindGiven {
		hintOtherKind(ctx, a, sess, path)
	}
	if asJSON {
		out := make([]contenderJSON, 0, len(cs))
		for _, c := range cs {
			out = append(out, toContenderJSON(c))
		}
		return a.printJSON(out)
	}
	tw := cli.Table(a.Stdout)
	fmt.Fprintln(tw, "STATE\tNODE\tTOKEN\tSESSION\tSINCE\tDATA")
	for _, c := range cs {
		state := "waits"
		if c.Holds {
			state = "holds"
		}
		if kind == "rwlock" {
			if c.Writer {
				state += " (write)"
			} else {
				state += " (read)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t0x%x\t%s\t%s\n", state, c.Path, c.Token, c.Session,
			c.Since.Format(time.RFC3339), c.Data)
	}
	return tw.Flush()
}

// contenders lists a lock's holders and waiters by its kind.
func contenders(ctx context.Context, sess *zkcoord.Session, path, kind string) ([]lock.Contender, error) {
	switch kind {
	case "rwlock":
		rw, err := lock.NewRWMutex(sess, path)
		if err != nil {
			return nil, cli.Usagef("locks: %v", err)
		}
		return rw.Contenders(ctx)
	case "semaphore":
		// Holders does not need the number of leases to list the nodes;
		// every lease node is listed, the holders first.
		s, err := lock.NewSemaphore(sess, path, 1)
		if err != nil {
			return nil, cli.Usagef("locks: %v", err)
		}
		leases, waiting, err := s.Holders(ctx)
		if err != nil {
			return nil, err
		}
		return append(leases, waiting...), nil
	}
	m, err := lock.NewMutex(sess, path)
	if err != nil {
		return nil, cli.Usagef("locks: %v", err)
	}
	return m.Contenders(ctx)
}

// hintOtherKind says on stderr, when no mutex contender was found at path
// but path has children, that they may be another kind of lock's: an empty
// list would otherwise read as "nobody holds it".
func hintOtherKind(ctx context.Context, a *app, sess *zkcoord.Session, path string) {
	children, _, err := sess.Children(ctx, path)
	if err != nil || len(children) == 0 {
		return
	}
	fmt.Fprintf(a.Stderr, "zkcoord: no mutex contender at %s, but it has children (%d): "+
		"a read/write lock or a semaphore is listed with --kind rwlock or --kind semaphore\n", path, len(children))
}
