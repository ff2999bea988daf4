package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord"

	"github.com/zkcoord/zkcoord/lock"
)

// "lock break" and "lock revoke" are subcommands of lock. A lock path
// always starts with "/", so "zkcoord lock break ..." can never mean a lock
// named "break": the lock at /break is "zkcoord lock /break".

var lockBreakCommand = &command{
	name:     "break",
	parent:   "lock",
	synopsis: "PATH --yes",
	brief:    "PATH --yes",
	summary:  "delete the node of a mutex's holder",
	help: `
Delete the lock node of the holder of the mutex at PATH, so that the next
waiter gets the lock. The holder is not asked: a zkcoord holder sees the loss
and stops its command, but a holder that is stuck or partitioned may still
act until it notices. Use it only when the holder is known to be dead and its
session has not expired yet; prefer 'lock revoke'. Without --yes nothing is
done (exit 2). Prints the node, token and session of the holder it broke.

Example:
  zkcoord lock break /locks/nightly-report --yes
`,
	run: runLockBreak,
}

var lockRevokeCommand = &command{
	name:     "revoke",
	parent:   "lock",
	synopsis: "PATH [--wait DURATION]",
	brief:    "PATH",
	summary:  "ask the holder of a mutex to release it, and wait until it has",
	help: `
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
	run: runLockRevoke,
}

func runLockBreak(a *app, cmd *command, args []string) error {
	return lockAdmin(a, cmd, args, true)
}

func runLockRevoke(a *app, cmd *command, args []string) error {
	return lockAdmin(a, cmd, args, false)
}

// lockAdmin breaks (or revokes) the mutex at the path in args.
func lockAdmin(a *app, cmd *command, args []string, breakIt bool) error {
	fs := a.flags(cmd, "")
	var (
		yes  *bool
		wait *time.Duration
	)
	if breakIt {
		yes = fs.Bool("yes", false, "really break the lock")
	} else {
		wait = fs.Duration("wait", 30*time.Second, "give up (exit 1) if the holder still holds the lock after this `duration`; 0: ask, do not wait")
	}
	path, _, err := fs.pathArg(args)
	if err != nil {
		return err
	}
	if breakIt && !*yes {
		return usagef("lock break: breaking %s lets another client take it while its holder may still act; give --yes to do it", path)
	}
	if !breakIt && *wait < 0 {
		return usagef("lock revoke: --wait must not be negative")
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	m, err := lock.NewMutex(sess, path)
	if err != nil {
		return usagef("lock %s: %v", cmd.name, err)
	}
	var h lock.Contender
	if breakIt {
		h, err = m.Break(ctx)
	} else {
		h, err = m.Revoke(ctx)
	}
	if errors.Is(err, lock.ErrNotHeld) {
		return fmt.Errorf("%s is not held", path)
	}
	if err != nil {
		return err
	}
	verb := "broke"
	if !breakIt {
		verb = "asked to release"
		if *wait > 0 {
			err := waitGone(a, sess, h.Path, *wait)
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("the holder of %s (node %s token %d session 0x%x) still holds it %v after it was asked to release it: "+
					"only a holder that opted in ('zkcoord lock --revocable', a Curator revocation listener) lets go; "+
					"'zkcoord lock break' takes the lock from it", path, h.Path, h.Token, h.Session, *wait)
			}
			if err != nil {
				return err
			}
			verb = "released"
		}
	}
	a.printf("%s %s node %s token %d session 0x%x\n", verb, path, h.Path, h.Token, h.Session)
	return nil
}

// waitGone waits, at most d, until node no longer exists. It returns
// context.DeadlineExceeded if it still exists after d.
func waitGone(a *app, sess *zkcoord.Session, node string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(a.ctx, d)
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
			_, err = sess.WaitEvent(ctx, w)
		}
		if err != nil {
			if ctx.Err() != nil && a.ctx.Err() == nil {
				return context.DeadlineExceeded
			}
			return err
		}
	}
}
