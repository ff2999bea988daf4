package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/lock"
)

// "lock break" and "lock revoke" are subcommands of lock. A lock path
// always starts with "/", so "zkcoord lock break ..." can never mean a lock
// named "break": the lock at /break is "zkcoord lock /break".

func newLockBreakCommand(a *app) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:         "break PATH --yes",
		Short:       "delete the node of a mutex's holder",
		Annotations: brief("PATH --yes"),
		Long: `
Delete the lock node of the holder of the mutex at PATH, so that the next
waiter gets the lock. The holder is not asked: a zkcoord holder sees the loss
and stops its command, but a holder that is stuck or partitioned may still
act until it notices. Use it only when the holder is known to be dead and its
session has not expired yet; prefer 'lock revoke'. Without --yes nothing is
done (exit 2). Prints the node, token and session of the holder it broke.
A lock that is not held, or that is a read/write lock or a semaphore, exits
1 and says so ('locks ls --kind' lists the holders of those).

Example:
  zkcoord lock break /locks/nightly-report --yes
`,
		Args: pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLockBreak(a, args[0], yes)
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "really break the lock")
	return cmd
}

func runLockBreak(a *app, path string, yes bool) error {
	if !yes {
		return cli.Usagef("lock break: breaking %s lets another client take it while its holder may still act; give --yes to do it", path)
	}
	_, h, done, err := onHolder(a, "lock break", path, (*lock.Mutex).Break)
	if err != nil {
		return err
	}
	defer done()
	a.printf("broke %s node %s token %d session 0x%x\n", path, h.Path, h.Token, h.Session)
	return nil
}

// onHolder opens a one-shot Session and does act (Break, Revoke) to the
// holder of the mutex at path. done closes the Session.
func onHolder(a *app, what, path string, act func(*lock.Mutex, context.Context) (lock.Contender, error)) (*zkcoord.Session, lock.Contender, func(), error) {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return nil, lock.Contender{}, nil, err
	}
	m, err := lock.NewMutex(sess, path)
	if err != nil {
		done()
		return nil, lock.Contender{}, nil, cli.Usagef("%s: %v", what, err)
	}
	h, err := act(m, ctx)
	if errors.Is(err, lock.ErrNotHeld) {
		err = fmt.Errorf("%s is not held", path)
		if kind := otherLockKind(ctx, sess, path); kind != "" {
			err = fmt.Errorf("%s supports mutexes only (lock PATH), and %s is a %s: 'zkcoord locks ls %s --kind %s' lists its holders, "+
				"'zkcoord rm NODE' deletes one", what, path, lockKinds[kind], path, kind)
		}
	}
	if err != nil {
		done()
		return nil, lock.Contender{}, nil, err
	}
	return sess, h, done, nil
}

// lockKinds names the kinds of lock of locks --kind.
var lockKinds = map[string]string{"mutex": "mutex", "rwlock": "read/write lock", "semaphore": "semaphore"}

// otherLockKind tells, by its children, whether the lock at path is a
// read/write lock (__READ__ and __WRIT__ nodes: "rwlock") or a semaphore
// (locks and leases: "semaphore"); "" if it is neither, or cannot be read.
func otherLockKind(ctx context.Context, sess *zkcoord.Session, path string) string {
	kids, _, err := sess.Children(ctx, path)
	if err != nil {
		return ""
	}
	if slices.Contains(kids, "leases") && slices.Contains(kids, "locks") {
		return "semaphore"
	}
	for _, k := range kids {
		if strings.Contains(k, "__READ__") || strings.Contains(k, "__WRIT__") {
			return "rwlock"
		}
	}
	return ""
}
