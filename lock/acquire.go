package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/lockdelay"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// contention describes one kind of contender in one lock directory.
type contention struct {
	sess      *zkcoord.Session
	dir       string // the lock directory
	name      string // lock name: "lock-", "__READ__", "__WRIT__"
	data      []byte
	recognise func(string) (contender, bool)
	// kind is mutexKind or rwKind for a lock that refuses a directory
	// holding another kind's contenders; "" for a Semaphore's acquirers'
	// mutex, whose Semaphore checks its own path.
	kind string
	// delay is the lock-delay (WithLockDelay): 0 for none.
	delay time.Duration
}

// acquire creates a contender node and waits until it holds the lock. With
// try it gives up, with ErrLocked, as soon as it would have to wait. On any
// failure its node is deleted before acquire returns (in the background
// only if ctx has ended or the delete failed).
func (c contention) acquire(ctx context.Context, try bool) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := c.arrive(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock: %s: %w", c.dir, err)
	}
	node, children, err := c.sess.CreateProtectedAndList(ctx, c.dir, c.name, c.data, zkcoord.FlagEphemeralSequential)
	if err != nil {
		if node != "" {
			deleteNow(ctx, c.sess, node)
		}
		return nil, fmt.Errorf("lock: %s: %w", c.dir, err)
	}
	return c.contend(ctx, node, children, try, t)
}

// contend waits until node, the contender's node just created, holds the
// lock; children is the directory's listing taken right after the create.
// On any failure node is deleted (in the background if need be).
func (c contention) contend(ctx context.Context, node string, children []string, try bool, t *lockdelay.Tracker) (*Lease, error) {
	if err := c.refuseOtherKind(ctx, children); err != nil {
		deleteNow(ctx, c.sess, node)
		return nil, err
	}
	l, err := c.wait(ctx, node, try, children, t)
	switch {
	case errors.Is(err, zkcoord.ErrSequenceWrapped):
		// Gone before the refusal is reported, so that the directory
		// empties as soon as its other contenders leave it.
		deleteNow(ctx, c.sess, node)
		return nil, err
	case err != nil:
		// Gone before the failure is reported, unless ctx has ended: a
		// node left behind for a moment would turn the next TryLock away.
		deleteNow(ctx, c.sess, node)
		return nil, err
	}
	return l, nil
}

// refuseOtherKind returns ErrOtherKind if the lock directory, listed as
// children right after the contender's node was created, holds contenders
// of another kind of lock: a Mutex's, an RWMutex's, or a Semaphore's in
// its subdirectories. Each kind ignores the others' nodes, so two kinds on
// one path would not exclude each other. Of two contenders of different
// kinds, the one created last finds the other's node and refuses (both may
// refuse if they start together), so two kinds never hold one path at
// once. Clients that do not check (Curator, Kazoo) are caught only when
// they came first.
//
// Only this first listing is checked: a contender of another kind that
// arrives later refuses by itself, and a waiter that refused because of it
// would give up its place in the queue for nothing.
func (c contention) refuseOtherKind(ctx context.Context, children []string) error {
	if c.kind == "" || brokenMixedKinds() {
		return nil
	}
	if node, kind := otherKind(children, c.kind); node != "" {
		return otherKindErr(c.dir, c.kind, kind, node)
	}
	if !slices.ContainsFunc(semaphoreDirs, func(d subdir) bool { return slices.Contains(children, d.name) }) {
		return nil
	}
	// The directory looks like a Semaphore's. Empty, it is one that was
	// used and is now free: its subdirectories are containers, which the
	// server removes a while after they empty.
	for _, d := range semaphoreDirs {
		dir := zkcoord.Join(c.dir, d.name)
		kids, _, err := c.sess.Children(ctx, dir)
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue
		}
		if err != nil {
			return fmt.Errorf("lock: %s: %w", dir, err)
		}
		for _, k := range kids {
			if _, ok := d.recognise(k); ok {
				return otherKindErr(c.dir, c.kind, semaphoreKind, d.name+"/"+k)
			}
		}
	}
	return nil
}

// otherKindErr reports that a lock of kind mine found node, a contender of
// the other kind, in dir.
func otherKindErr(dir, mine, other, node string) error {
	return fmt.Errorf("lock: %s: %w: a %s cannot be taken beside the %s contender %s", dir, ErrOtherKind, mine, other, node)
}

// deleteNow deletes a node its creator gives up on before returning, or in
// the background if that fails (ctx ended, or the connection is down).
func deleteNow(ctx context.Context, sess *zkcoord.Session, path string) {
	if err := recipe.EnsureDeleted(ctx, sess, path); err != nil {
		recipe.EnsureDeletedLater(sess, path)
	}
}

// ownWatch is the result of the data watch a contender sets on its own
// node: the node's stat (for the fencing token) and the watch, which tells
// a waiter or a holder that the node was deleted.
type ownWatch struct {
	data []byte
	stat *zkcoord.Stat
	w    <-chan zkcoord.Event
	err  error
}

// watchOwn sets the watch on path concurrently with whatever the caller
// sends next; ZooKeeper answers both in one round trip.
func watchOwn(ctx context.Context, sess *zkcoord.Session, path string) <-chan ownWatch {
	res := make(chan ownWatch, 1)
	go func() {
		data, st, w, err := sess.GetW(context.WithoutCancel(ctx), path)
		res <- ownWatch{data, st, w, err}
	}()
	return res
}

// self tracks the watch a contender keeps on its own node. The watch is set
// only once the contender has to wait: a contender that gets the lock at
// once leaves it to the Lease, which sets it when it is first asked for.
type self struct {
	node    string
	pending <-chan ownWatch // until the first GetW answers
	own     *ownWatch
}

// watchFrom starts watching the own node, unless that is under way or done.
func (s *self) watchFrom(ctx context.Context, sess *zkcoord.Session) {
	if s.pending == nil && s.own == nil {
		s.pending = watchOwn(ctx, sess, s.node)
	}
}

// watch returns the current watch, nil while it is being set.
func (s *self) watch() <-chan zkcoord.Event {
	if s.own == nil || s.own.err != nil {
		return nil
	}
	return s.own.w
}

// lease hands the node and its watch (or the watch still being set, or
// none yet) to a new Lease.
func (s *self) lease(sess *zkcoord.Session, mark bool) *Lease {
	if s.own != nil {
		done := make(chan ownWatch, 1)
		done <- *s.own
		return newLease(sess, s.node, done, mark)
	}
	return newLease(sess, s.node, s.pending, mark)
}

// wait lists the contenders until node holds the lock, watching only the
// one contender it waits for. It fails with zkcoord.ErrSequenceWrapped as
// soon as a listing holds a contender whose sequence number is negative:
// the directory's counter wrapped, and its order is no longer creation
// order, so that a newer contender may sort before the holder (see
// docs/protocol.md#sequence-numbers-and-their-wrap).
//
// The first listing came with the create (Session.CreateProtectedAndList
// sends it right behind the create, so ZooKeeper processes it after); later
// ones are taken after each notification. A contender that has to wait
// also watches its own node, from the first wait on.
//
// With a lock-delay, t follows the contenders it waited for, and a
// contender found first waits the delay (see hold) unless its predecessor
// released cleanly.
func (c contention) wait(ctx context.Context, node string, try bool, first []string, t *lockdelay.Tracker) (*Lease, error) {
	me := zkcoord.Base(node)
	s := &self{node: node}
	look := func() (string, error) {
		children, err := first, error(nil)
		if first == nil {
			children, _, err = c.sess.Children(ctx, c.dir)
		}
		first = nil
		if errors.Is(err, zkcoord.ErrNoNode) {
			return "", ErrNodeDeleted
		}
		if err != nil {
			return "", err
		}
		sorted := sortContenders(children, c.recognise)
		if w := wrapped(sorted); w != "" {
			return "", fmt.Errorf("contender %s has a negative sequence number: %w", w, zkcoord.ErrSequenceWrapped)
		}
		pred, found := blocker(sorted, me)
		switch {
		case !found:
			return "", ErrNodeDeleted
		case pred == "":
			return "", c.sess.Err()
		case try:
			return "", ErrLocked
		}
		s.watchFrom(ctx, c.sess)
		t.Behind(zkcoord.Join(c.dir, pred))
		return zkcoord.Join(c.dir, pred), nil
	}
	for {
		pred, _, pw, err := recipe.WatchPredecessor(ctx, c.sess, look)
		switch {
		case errors.Is(err, ErrNodeDeleted):
			return nil, fmt.Errorf("lock: %s: %w", node, ErrNodeDeleted)
		case err != nil:
			return nil, fmt.Errorf("lock: %s: %w", c.dir, err)
		case pred == "":
			if err := c.hold(ctx, s, try, t); err != nil {
				return nil, err
			}
			return s.lease(c.sess, c.delay > 0), nil
		}
		if err := c.block(ctx, pw, nil, s, nil); err != nil {
			return nil, err
		}
	}
}

// block waits until the watch pw or also (nil: none) fires, while keeping
// an eye on the contender's own node, ctx, the Session and abort (closed:
// give up).
func (c contention) block(ctx context.Context, pw, also <-chan zkcoord.Event, s *self, abort <-chan struct{}) error {
	for {
		select {
		case <-pw:
			return nil
		case <-also:
			return nil
		case <-abort:
			return fmt.Errorf("lock: %s: aborted", s.node)
		case r := <-s.pending:
			s.pending, s.own = nil, &r
			if r.err != nil {
				return ownErr(s.node, r.err)
			}
		case ev, ok := <-s.watch():
			if ok && ev.Type == zkcoord.EventNodeDeleted {
				return fmt.Errorf("lock: %s: %w", s.node, ErrNodeDeleted)
			}
			// Data changed, or the Session is ending (then GetW fails):
			// watch again.
			data, st, w, err := c.sess.GetW(ctx, s.node)
			if err != nil {
				return ownErr(s.node, err)
			}
			s.own = &ownWatch{data: data, stat: st, w: w}
		case <-ctx.Done():
			return fmt.Errorf("lock: %s: %w", c.dir, ctx.Err())
		case <-c.sess.Done():
			return fmt.Errorf("lock: %s: %w", c.dir, c.sess.Err())
		}
	}
}

func ownErr(node string, err error) error {
	if errors.Is(err, zkcoord.ErrNoNode) {
		return fmt.Errorf("lock: %s: %w", node, ErrNodeDeleted)
	}
	return fmt.Errorf("lock: %s: %w", node, err)
}
