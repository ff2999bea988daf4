package main

import (
	"errors"
	"fmt"

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
	synopsis: "PATH",
	brief:    "PATH",
	summary:  "ask the holder of a mutex to release it",
	help: `
Ask the holder of the mutex at PATH to release the lock (Curator's Revoker
protocol: the request is written into the holder's node). The holder decides:
a Curator holder with a revocation listener, 'zkcoord lock --revocable', or a
zkcoord program watching Lease.Revoked, lets go. Prints the node, token and
session of the holder asked.

Example:
  zkcoord lock revoke /locks/nightly-report
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
	var yes *bool
	if breakIt {
		yes = fs.Bool("yes", false, "really break the lock")
	}
	path, _, err := fs.pathArg(args)
	if err != nil {
		return err
	}
	if breakIt && !*yes {
		return usagef("lock break: breaking %s lets another client take it while its holder may still act; give --yes to do it", path)
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
	}
	a.printf("%s %s node %s token %d session 0x%x\n", verb, path, h.Path, h.Token, h.Session)
	return nil
}
