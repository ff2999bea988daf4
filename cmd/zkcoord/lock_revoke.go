package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/lock"
)

func newLockRevokeCommand(a *app) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:         "revoke PATH [--wait DURATION]",
		Short:       "ask the holder of a mutex to release it, and wait until it has",
		Annotations: brief("PATH"),
		Long: `
Ask the holder of the mutex at PATH to release the lock (Curator's Revoker
protocol: the request is written into the holder's node), and wait until it
has. The holder decides: only one that opted in lets go - a holder run with
'zkcoord lock --revocable', a Curator holder with a revocation listener, a
zkcoord program watching Lease.Revoked. Any other holder ignores the request.

Exit status 0 once the holder's node is gone (prints "released", the node,
token and session of the holder); 1 if the holder still holds the lock after
--wait (it did not opt in, or is still stopping: 'zkcoord lock break' takes
the lock from it). With --wait 0 zkcoord only asks (prints "asked to
release") and exits 0 without waiting.

Example:
  zkcoord lock revoke /locks/nightly-report --wait 1m
`,
		Args: pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLockRevoke(a, args[0], wait)
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second,
		"give up (exit 1) if the holder still holds the lock after this `duration`; 0: ask, do not wait")
	return cmd
}

func runLockRevoke(a *app, path string, wait time.Duration) error {
	if wait < 0 {
		return cli.Usagef("lock revoke: --wait must not be negative")
	}
	sess, h, done, err := onHolder(a, "lock revoke", path, (*lock.Mutex).Revoke)
	if err != nil {
		return err
	}
	defer done()
	verb := "asked to release"
	if wait > 0 {
		err := waitGone(a, sess, h.Path, wait)
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("the holder of %s (node %s token %d session 0x%x) still holds it %v after it was asked to release it: "+
				"only a holder that opted in ('zkcoord lock --revocable', a Curator revocation listener) lets go; "+
				"'zkcoord lock break' takes the lock from it", path, h.Path, h.Token, h.Session, wait)
		}
		if err != nil {
			return err
		}
		verb = "released"
	}
	a.printf("%s %s node %s token %d session 0x%x\n", verb, path, h.Path, h.Token, h.Session)
	return nil
}

// waitGone waits, at most d, until node no longer exists. It returns
// context.DeadlineExceeded if it still exists after d.
func waitGone(a *app, sess *zkcoord.Session, node string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(a.Ctx, d)
	defer cancel()
	for {
		var (
			exists bool
			w      <-chan zkcoord.Event
		)
		err := sess.Retry(ctx, func(ctx context.Context) (err error) {
			exists, _, w, err = sess.ExistsW(ctx, node)
			return err
		})
		if err == nil && !exists {
			return nil
		}
		if err == nil {
			_, err = recipe.WaitEvent(ctx, sess, w)
		}
		if err != nil {
			if ctx.Err() != nil && a.Ctx.Err() == nil {
				return context.DeadlineExceeded
			}
			return err
		}
	}
}
