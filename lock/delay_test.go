package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

// long is a lock-delay no test waits out: a test that finishes shows it was
// not waited.
const long = 10 * time.Minute

// TestLockDelayAfterExpiry: the holder's session expires while a contender
// waits; the contender takes the lock only once the delay has passed since
// the expiry began.
func TestLockDelayAfterExpiry(t *testing.T) {
	const d = 2 * time.Second
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	a, b := connect(t), connect(t)
	la, err := newMutex(t, a, dir, lock.WithLockDelay(d)).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := lockAfter(ctx, newMutex(t, b, dir, lock.WithLockDelay(d)), la)
	queued(t, b, dir, 2)
	start := time.Now()
	if err := cluster.ExpireSession(ctx, a.ID(), a.Password()); err != nil {
		t.Fatal(err)
	}
	acq := awaitAcquisition(t, ctx, got)
	if took := time.Since(start); took < d {
		t.Errorf("acquired %v after the expiry, before the lock-delay of %v", took, d)
	}
	acq.lease.Release(ctx)
}

// TestLockDelayCleanRelease: a release by a holder with a lock-delay is
// marked, and the waiter behind it takes the lock at once; so does a
// contender arriving after such a release, and the first contender of a
// new lock.
func TestLockDelayCleanRelease(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	a, b := connect(t), connect(t)
	ma, mb := newMutex(t, a, dir, lock.WithLockDelay(long)), newMutex(t, b, dir, lock.WithLockDelay(long))
	la, err := ma.Lock(ctx)
	if err != nil {
		t.Fatalf("first Lock of a new lock: %v", err)
	}
	got := lockAfter(ctx, mb, la)
	queued(t, b, dir, 2)
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb := awaitAcquisition(t, ctx, got).lease
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Free after a clean release: TryLock, which refuses to wait out a
	// delay, takes it.
	l, err := ma.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock after a clean release: %v", err)
	}
	l.Release(ctx)
}

// TestLockDelayArrivalAfterExpiry: a contender arriving at a lock whose
// holder's session expired, with nobody waiting, waits the delay too; so
// does one arriving after a holder without the mark (no lock-delay)
// released, and TryLock refuses while the delay runs.
func TestLockDelayArrivalAfterExpiry(t *testing.T) {
	const d = 2 * time.Second
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	a, b := connect(t), connect(t)
	if _, err := newMutex(t, a, dir, lock.WithLockDelay(d)).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cluster.ExpireSession(ctx, a.ID(), a.Password()); err != nil {
		t.Fatal(err)
	}
	queued(t, b, dir, 0)
	mb := newMutex(t, b, dir, lock.WithLockDelay(d))
	if _, err := mb.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock during the lock-delay: %v, want ErrLocked", err)
	}
	lb, err := mb.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < d {
		t.Errorf("acquired %v after the expiry, before the lock-delay of %v", took, d)
	}
	lb.Release(ctx)

	// A release that only deletes the node counts as an expiry.
	c := connect(t)
	lc, err := newMutex(t, c, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := lc.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock after an unmarked release: %v, want ErrLocked", err)
	}
}

func TestLockDelayBadInput(t *testing.T) {
	sess := connect(t)
	if _, err := lock.NewMutex(sess, testDir(t), lock.WithLockDelay(-time.Second)); err == nil {
		t.Fatal("NewMutex with a negative lock-delay: no error")
	}
	if _, err := lock.NewRWMutex(sess, testDir(t), lock.WithLockDelay(time.Second)); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("NewRWMutex with a lock-delay: %v, want ErrInvalidConfig", err)
	}
	if _, err := lock.NewSemaphore(sess, testDir(t), 2, lock.WithLockDelay(time.Second)); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("NewSemaphore with a lock-delay: %v, want ErrInvalidConfig", err)
	}
}

// TestLockDelayCuratorRelease: Curator releases by deleting its node, with
// no mark, so a Mutex with a lock-delay that waits behind it waits the
// delay (as after an expiry); a Mutex's marked release, which also writes
// the lock directory's data, lets a waiting Curator contender in at once.
func TestLockDelayCuratorRelease(t *testing.T) {
	const d = 2 * time.Second
	ctx := testCtx(t, 150*time.Second)
	dir := testDir(t)
	cur := startCurator(t)
	a := connect(t)
	cur.send(t, "h1 hold mutex "+dir+" 1")
	cur.mustExpect(t, ctx, "h1", "held")
	got := make(chan *lock.Lease, 1)
	go func() {
		l, err := newMutex(t, a, dir, lock.WithLockDelay(d)).Lock(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	queued(t, a, dir, 2)
	start := time.Now()
	cur.send(t, "h1 release")
	cur.mustExpect(t, ctx, "h1", "released")
	l := <-got
	if l == nil {
		t.FailNow()
	}
	if took := time.Since(start); took < d {
		t.Errorf("acquired %v after Curator's release, before the lock-delay of %v", took, d)
	}
	cur.send(t, "h2 hold mutex "+dir+" 1")
	queued(t, a, dir, 2)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	cur.mustExpect(t, ctx, "h2", "held")
	cur.send(t, "h2 release")
	cur.mustExpect(t, ctx, "h2", "released")
}

// TestLockDelayReentrant: a ReentrantMutex takes the lock-delay as a Mutex
// does.
func TestLockDelayReentrant(t *testing.T) {
	const d = 2 * time.Second
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	a, b := connect(t), connect(t)
	ra, err := lock.NewReentrantMutex(a, dir, lock.WithLockDelay(d))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := lock.NewReentrantMutex(b, dir, lock.WithLockDelay(d))
	if err != nil {
		t.Fatal(err)
	}
	la, err := ra.Lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	got := acquireAfter(ctx, func(ctx context.Context) (*lock.Lease, error) { return rb.Lock(ctx, "b") }, la)
	queued(t, b, dir, 2)
	start := time.Now()
	if err := cluster.ExpireSession(ctx, a.ID(), a.Password()); err != nil {
		t.Fatal(err)
	}
	awaitAcquisition(t, ctx, got)
	if took := time.Since(start); took < d {
		t.Errorf("acquired %v after the expiry, before the lock-delay of %v", took, d)
	}
}
