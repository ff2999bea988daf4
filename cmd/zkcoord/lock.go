package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/zkcoord/internal/supervise"
	"github.com/zkcoord/zkcoord/lock"
)

// lockOptions are the flags of lock.
type lockOptions struct {
	read, write bool
	limit       int
	wait        time.Duration
	try         bool
	grace       time.Duration
	data        string
	revocable   bool
	lockDelay   time.Duration
	limitFrom   string // a Curator SharedCount holding the semaphore's limit
	kazoo       bool   // Kazoo's semaphore layout
	asJSON      bool
}

func newLockCommand(a *app) *cobra.Command {
	var o lockOptions
	cmd := &cobra.Command{
		Use:         "lock PATH [FLAGS] [-- CMD [ARG...]]",
		Short:       "run CMD while holding a lock",
		Annotations: brief("PATH -- CMD..."),
		Long: `
Acquire the lock at PATH, run CMD while holding it, and release it when CMD
ends. The lock is Apache Curator's InterProcessMutex (or, with --read and
--write, the read and the write side of InterProcessReadWriteLock; with
--limit N, one of N leases of InterProcessSemaphoreV2), so Java and Go
services can share it. With --limit-from, the semaphore's limit is the count
of another node (Curator's SharedCount, as 'zkcoord counter' writes it), N
while that node does not exist; a changed count applies to the next
acquisition. With --kazoo, the lease is taken in the layout of Kazoo's
Semaphore instead, shared with Python clients: the node PATH stores the
limit, which must be N.

These are three kinds of lock, which do not see each other's nodes: take the
same kind on every holder of a path (--read beside --write, never beside a
plain lock). A lock that finds another kind on its path exits with status 1
and a message naming both, without running CMD.

If the lock is lost while CMD runs (the session was declared lost or expired,
or someone deleted the lock node), CMD is stopped - SIGTERM to its processes,
SIGKILL after --grace, or at once if someone else may already hold the lock -
and zkcoord exits with status 3. Otherwise zkcoord exits with CMD's
status. SIGINT or SIGTERM stop CMD the same way and release the lock. Whatever
--grace says, CMD is killed before ZooKeeper can expire the session, so a stop
during a network partition ends before anyone else can take the lock.

CMD's processes are CMD and every process it starts: on Linux also those
that leave its process group or session (setsid, a double fork, a daemon);
on other Unix systems those of its process group only. Whatever CMD leaves
running when it exits is killed. The lock is released only once they are all
gone, and if zkcoord dies, even by SIGKILL, they are killed at once.

Without CMD, zkcoord prints the fencing token ("locked PATH token N"; with
--json one line of JSON: path, node, token) and holds the lock until it is
interrupted (exit 0) or loses the lock (exit 3).

With --lock-delay D, zkcoord waits D before it takes a lock whose last holder
did not release it cleanly (its session expired, or its node was deleted):
a holder paused past its session timeout (GC, a stopped VM) has that time to
wake and stop its CMD. Holders with --lock-delay mark their releases; after a
release by Curator, Kazoo or a zkcoord without the flag, the delay is waited
too. Take it longer than the longest pause a holder may suffer.

With --revocable, a request to release the lock ('zkcoord lock revoke', or
Curator's Revoker) stops CMD as SIGTERM does and releases the lock; zkcoord
exits with CMD's status (without CMD, 0). Without it, requests are ignored.

CMD runs with:
  ZKCOORD_TOKEN  the fencing token: larger for every later holder of this lock;
                 a resource that remembers the largest token it has seen can
                 refuse a holder that lost the lock without noticing
  ZKCOORD_PATH   PATH
  ZKCOORD_NODE   the lock node of this holder

Example:
  zkcoord lock /locks/nightly-report -- ./report.sh
`,
		Args: pathThenCommand,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, cmdArgs := splitCommand(cmd, args)
			return runLock(a, &o, path[0], cmdArgs)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.read, "read", false, "take the read side of a read/write lock (many readers, no writer)")
	fs.BoolVar(&o.write, "write", false, "take the write side of a read/write lock (excludes readers and writers)")
	fs.IntVar(&o.limit, "limit", 0, "hold one of `n` leases of a semaphore instead of an exclusive lock")
	fs.DurationVar(&o.wait, "wait", 0, "give up (exit 1) if the lock is not acquired within this `duration`; 0 waits for ever")
	fs.BoolVar(&o.try, "try", false, "give up at once (exit 1) if the lock is held")
	fs.DurationVar(&o.grace, "grace", 10*time.Second, "after SIGTERM, wait this long for CMD to exit before SIGKILL")
	fs.StringVar(&o.data, "data", "", "`data` stored in the lock node to identify this holder (default host:pid)")
	fs.BoolVar(&o.revocable, "revocable", false, "release the lock when asked ('zkcoord lock revoke', Curator's Revoker): stop CMD, release, exit with its status")
	fs.DurationVar(&o.lockDelay, "lock-delay", 0, "wait this `duration` before taking a lock whose last holder's session expired (a plain lock only)")
	fs.StringVar(&o.limitFrom, "limit-from", "", "with --limit: read the limit from the Curator SharedCount at `path` (N while it does not exist)")
	fs.BoolVar(&o.asJSON, "json", false, "without CMD: print the lock taken as one line of JSON (path, node, token)")
	fs.BoolVar(&o.kazoo, "kazoo", false, "with --limit: the semaphore in Kazoo's layout, shared with Kazoo's Semaphore")
	cmd.AddCommand(newLockBreakCommand(a), newLockRevokeCommand(a))
	return cmd
}

func runLock(a *app, o *lockOptions, path string, cmdArgs []string) error {
	if o.read && o.write {
		return cli.Usagef("lock: --read and --write exclude each other")
	}
	if (o.read || o.write) && o.limit > 0 {
		return cli.Usagef("lock: --limit excludes --read and --write")
	}
	if o.limit < 0 {
		return cli.Usagef("lock: --limit must be positive")
	}
	if o.lockDelay < 0 {
		return cli.Usagef("lock: --lock-delay must not be negative")
	}
	if o.lockDelay > 0 && (o.read || o.write || o.limit > 0) {
		return cli.Usagef("lock: --lock-delay applies to a plain lock, not to --read, --write or --limit")
	}
	var semOpts []lock.Option
	switch {
	case (o.limitFrom != "" || o.kazoo) && o.limit == 0:
		return cli.Usagef("lock: --limit-from and --kazoo are for a semaphore: give --limit N")
	case o.limitFrom != "" && o.kazoo:
		return cli.Usagef("lock: --limit-from excludes --kazoo (Kazoo keeps the limit in the semaphore's node)")
	case o.limitFrom != "":
		if err := zkcoord.ValidatePath(o.limitFrom); err != nil {
			return cli.Usagef("lock: --limit-from: %v", err)
		}
		semOpts = append(semOpts, lock.WithLimitFrom(o.limitFrom))
	case o.kazoo:
		semOpts = append(semOpts, lock.WithKazooLayout())
	}
	data := o.data
	if data == "" {
		data = defaultHolderData()
	}
	if len(cmdArgs) > 0 {
		if _, err := supervise.Find(cmdArgs); err != nil {
			return fmt.Errorf("lock %s: %w (the lock was not taken)", path, err)
		}
	}
	if err := a.Setup(); err != nil {
		return err
	}

	sess, err := a.connect(a.Ctx)
	if err != nil {
		return err
	}
	defer cli.CloseSession(sess)
	go watchSession(a, sess)

	side := kindMutex
	switch {
	case o.read:
		side = kindRead
	case o.write:
		side = kindWrite
	}
	lease, err := acquire(a, sess, path, side, o.limit, o.wait, o.try, []byte(data), o.lockDelay, semOpts...)
	if err != nil {
		return err
	}
	a.Rec.LockHeld(path, true)
	defer a.Rec.LockHeld(path, false)
	token := lease.Token()
	a.Log.Info("lock acquired", "path", path, "node", lease.Path(), "token", token)
	release := func() {
		ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
		defer cancel()
		if err := lease.Release(ctx); err != nil && !errors.Is(err, lock.ErrLost) {
			a.Log.Warn("releasing the lock", "path", path, "err", err)
		}
	}

	var revoked <-chan struct{} // nil: never ready
	if o.revocable {
		revoked = lease.Revoked()
	}
	if len(cmdArgs) == 0 {
		if o.asJSON {
			a.printLine(struct {
				Path  string `json:"path"`
				Node  string `json:"node"`
				Token int64  `json:"token"`
			}{path, lease.Path(), token})
		} else {
			a.printf("locked %s token %d\n", path, token)
		}
		select {
		case <-a.Ctx.Done():
			release()
			return nil
		case <-revoked:
			a.Log.Info("asked to release the lock", "path", path)
			release()
			return nil
		case <-lease.Done():
			return cli.Lostf("lost the lock %s: %v", path, lease.Err())
		}
	}

	env := []string{
		"ZKCOORD_TOKEN=" + strconv.FormatInt(token, 10),
		"ZKCOORD_PATH=" + path,
		"ZKCOORD_NODE=" + lease.Path(),
	}
	c, err := supervise.Start(supervise.Spec{Name: cmdArgs[0], Argv: cmdArgs, Env: env, Stdin: true})
	if err != nil {
		release()
		return err
	}
	a.Log.Debug("command started", "pid", c.Pid(), "cmd", cmdArgs)
	select {
	case <-c.Done():
		release()
		a.Log.Debug("command ended", "pid", c.Pid(), "how", c.Describe())
		return cli.ExitStatus(c.Status())
	case <-lease.Done():
		cause := lease.Err()
		g := supervise.LossGrace(sess, cause, o.grace)
		a.Log.Error("lock lost: stopping the command", "path", path, "err", cause, "grace", g)
		c.Stop(g, sess, nil)
		return cli.Lostf("lost the lock %s: %v (the command was stopped: %s)", path, cause, c.Describe())
	case <-a.Ctx.Done():
		a.Log.Info("interrupted: stopping the command", "pid", c.Pid())
		c.Stop(o.grace, sess, lease)
		release()
		return cli.ExitStatus(c.Status())
	case <-revoked:
		a.Log.Info("asked to release the lock: stopping the command", "path", path, "pid", c.Pid())
		c.Stop(o.grace, sess, lease)
		release()
		return cli.ExitStatus(c.Status())
	}
}

// lockKind is the kind of lock the flags ask for, besides --limit.
type lockKind int

const (
	kindMutex lockKind = iota
	kindRead
	kindWrite
)

// acquire takes the lock as the flags say; semOpts are the options of a
// semaphore only.
func acquire(a *app, sess *zkcoord.Session, path string, kind lockKind, limit int, wait time.Duration, try bool,
	data []byte, lockDelay time.Duration, semOpts ...lock.Option) (*lock.Lease, error) {
	ctx := a.Ctx
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	opts := []lock.Option{lock.WithData(data), lock.WithLockDelay(lockDelay)}
	take, err := taking(sess, path, kind, limit, try, opts, semOpts)
	if err != nil {
		return nil, cli.Usagef("lock: %v", err)
	}
	lease, err := take(ctx)
	switch {
	case err == nil:
		return lease, nil
	case errors.Is(err, lock.ErrLocked) && lockDelay > 0:
		return nil, fmt.Errorf("lock %s is held by another client, or its last holder left without a clean release less than --lock-delay %v ago", path, lockDelay)
	case errors.Is(err, lock.ErrLocked), errors.Is(err, lock.ErrNoLease):
		return nil, fmt.Errorf("lock %s is held by another client", path)
	case errors.Is(err, lock.ErrOtherKind):
		return nil, fmt.Errorf("acquiring the lock %s: %w; every holder of a path must take the same kind of lock "+
			"('zkcoord lock' takes a mutex, --read and --write a read/write lock, --limit a semaphore)", path, err)
	case errors.Is(err, lock.ErrLimitMismatch):
		return nil, fmt.Errorf("acquiring the lock %s: %w; give --limit the limit its Kazoo clients use", path, err)
	case a.Ctx.Err() != nil:
		return nil, &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("interrupted while waiting for the lock %s", path)}
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("lock %s not acquired within %v", path, wait)
	}
	return nil, fmt.Errorf("acquiring the lock %s: %w", path, err)
}

// taking returns the call that takes the lock the flags ask for: a
// semaphore with a limit, else a read/write lock's read or write side, else
// a mutex; the call waits for the lock unless try. semOpts are the options
// of a semaphore only.
func taking(sess *zkcoord.Session, path string, kind lockKind, limit int, try bool, opts, semOpts []lock.Option) (
	func(context.Context) (*lock.Lease, error), error) {
	pick := func(wait, now func(context.Context) (*lock.Lease, error)) func(context.Context) (*lock.Lease, error) {
		if try {
			return now
		}
		return wait
	}
	switch {
	case limit > 0:
		s, err := lock.NewSemaphore(sess, path, limit, append(opts, semOpts...)...)
		if err != nil {
			return nil, err
		}
		return pick(s.Acquire, s.TryAcquire), nil
	case kind == kindRead || kind == kindWrite:
		rw, err := lock.NewRWMutex(sess, path, opts...)
		if err != nil {
			return nil, err
		}
		if kind == kindRead {
			return pick(rw.RLock, rw.TryRLock), nil
		}
		return pick(rw.Lock, rw.TryLock), nil
	}
	m, err := lock.NewMutex(sess, path, opts...)
	if err != nil {
		return nil, err
	}
	return pick(m.Lock, m.TryLock), nil
}

// defaultHolderData identifies this process in the nodes it creates.
func defaultHolderData() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", h, os.Getpid())
}
