package lock_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

var curatorLeaseNode = regexp.MustCompile(`^_c_[0-9a-f-]{36}-lease-\d{10}$`)

func newSem(t testing.TB, sess *zkcoord.Session, dir string, max int) *lock.Semaphore {
	t.Helper()
	s, err := lock.NewSemaphore(sess, dir, max)
	if err != nil {
		t.Fatalf("NewSemaphore: %v", err)
	}
	return s
}

func TestSemaphoreLeases(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b := connect(t), connect(t)
	dir := testDir(t)
	sa, sb := newSem(t, a, dir, 2), newSem(t, b, dir, 2)

	l1, err := sa.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if zkcoord.Parent(l1.Path()) != dir+"/leases" || !curatorLeaseNode.MatchString(zkcoord.Base(l1.Path())) {
		t.Errorf("lease node %s does not have Curator's InterProcessSemaphoreV2 layout", l1.Path())
	}
	l2, err := sa.TryAcquire(ctx) // one Semaphore value may hold several leases
	if err != nil {
		t.Fatalf("second lease: %v", err)
	}
	if _, err := sb.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("TryAcquire when full: %v, want ErrNoLease", err)
	}
	if n, err := sb.Leases(ctx); err != nil || n != 2 {
		t.Errorf("Leases = %d, %v; want 2", n, err)
	}
	got := make(chan *lock.Lease, 1)
	go func() {
		l, err := sb.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	// The waiter holds the acquirers' mutex while it waits.
	queued(t, a, dir+"/leases", 3)
	queued(t, a, dir+"/locks", 1)
	select {
	case <-got:
		t.Fatal("third lease granted while full")
	default:
	}
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l3 := <-got
	if l3 == nil {
		t.FailNow()
	}
	if l3.Token() <= l2.Token() {
		t.Errorf("token %d not above %d", l3.Token(), l2.Token())
	}
	queued(t, a, dir+"/locks", 0)
	l2.Release(ctx)
	l3.Release(ctx)
	queued(t, a, dir+"/leases", 0)
}

// TestSemaphoreAcquireN: several leases are acquired at once or not at
// all, and released one by one or together.
func TestSemaphoreAcquireN(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b, c := connect(t), connect(t), connect(t)
	dir := testDir(t)
	sa, sb, sc := newSem(t, a, dir, 3), newSem(t, b, dir, 3), newSem(t, c, dir, 3)
	for _, n := range []int{0, -1, 4} {
		if _, err := sa.AcquireN(ctx, n); !errors.Is(err, lock.ErrBadCount) {
			t.Errorf("AcquireN(%d) of 3: %v, want ErrBadCount", n, err)
		}
		if _, err := sa.TryAcquireN(ctx, n); !errors.Is(err, lock.ErrBadCount) {
			t.Errorf("TryAcquireN(%d) of 3: %v, want ErrBadCount", n, err)
		}
	}
	queued(t, a, dir+"/leases", 0)

	ma, err := sa.AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	la := ma.Leases()
	if len(la) != 2 || la[0].Path() == la[1].Path() {
		t.Fatalf("AcquireN(2) gave %d leases", len(la))
	}
	for _, l := range la {
		if zkcoord.Parent(l.Path()) != dir+"/leases" || !curatorLeaseNode.MatchString(zkcoord.Base(l.Path())) {
			t.Errorf("lease node %s does not have Curator's InterProcessSemaphoreV2 layout", l.Path())
		}
	}
	// Two more do not fit, and the attempt leaves nothing behind.
	if _, err := sb.TryAcquireN(ctx, 2); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("TryAcquireN(2) with one lease free: %v, want ErrNoLease", err)
	}
	if n, err := sb.Leases(ctx); err != nil || n != 2 {
		t.Fatalf("Leases = %d, %v; want 2", n, err)
	}
	// b waits for two, holding the acquirers' mutex; c waits for one
	// behind it, although one is free.
	mb := make(chan *lock.MultiLease, 1)
	go func() {
		ml, err := sb.AcquireN(ctx, 2)
		if err != nil {
			t.Error(err)
		}
		mb <- ml
	}()
	queued(t, a, dir+"/leases", 4)
	lc := acquisitionOf(ctx, sc.Acquire)
	queued(t, a, dir+"/locks", 2)

	// One of a's leases released on its own ends the MultiLease, and
	// makes room for b's two.
	if err := la[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ma.Done():
	case <-ctx.Done():
		t.Fatal("a's MultiLease did not end when one of its leases was released")
	}
	if !errors.Is(ma.Err(), lock.ErrReleased) {
		t.Errorf("MultiLease after one release: %v, want ErrReleased", ma.Err())
	}
	got := <-mb
	if got == nil {
		t.FailNow()
	}
	if closed(la[1].Done()) {
		t.Error("the lease not released ended with the other")
	}
	// Now c holds the mutex and waits: three leases are held.
	queued(t, a, dir+"/leases", 4)
	select {
	case <-lc:
		t.Fatal("a fourth lease was granted")
	default:
	}
	if err := ma.Release(ctx); err != nil {
		t.Fatalf("releasing what is left of a's leases: %v", err)
	}
	awaitAcquisition(t, ctx, lc).lease.Release(ctx)
	if err := got.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range got.Leases() {
		if !errors.Is(l.Err(), lock.ErrReleased) {
			t.Errorf("lease %s after Release: %v", l.Path(), l.Err())
		}
	}
	queued(t, a, dir+"/leases", 0)
	queued(t, a, dir+"/locks", 0)
}

// TestSemaphoreAcquireNLimit: acquirers of one, two and three leases on
// several sessions never hold more than MaxLeases together, and none of
// them waits forever holding part of what it wants.
func TestSemaphoreAcquireNLimit(t *testing.T) {
	ctx := testCtx(t, 120*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	const max, rounds = 3, 6
	a, b, c := connect(t), connect(t), connect(t)
	ck := newChecker(t, a, chk, "sem", max)
	sems := []*lock.Semaphore{newSem(t, a, dir, max), newSem(t, b, dir, max), newSem(t, c, dir, max), newSem(t, c, dir, max)}
	n := []int{2, 2, 3, 1}
	res := semLoop(ctx, "go", ck, rounds, sems, n)
	res.check(t, "zkcoord", 8*rounds)
	checkFree(t, ck)
}

// TestSemaphoreLimit: many acquirers on several sessions never hold more
// than MaxLeases at once, and all get through.
func TestSemaphoreLimit(t *testing.T) {
	ctx := testCtx(t, 120*time.Second)
	dir := testDir(t)
	const max, sessions, perSession, rounds = 3, 4, 2, 5
	var (
		holders, peak, entries atomic.Int32
		wg                     sync.WaitGroup
		errs                   = make(chan error, 100)
	)
	for i := 0; i < sessions; i++ {
		sess := connect(t)
		s := newSem(t, sess, dir, max)
		for j := 0; j < perSession; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					l, err := s.Acquire(ctx)
					if err != nil {
						errs <- err
						return
					}
					n := holders.Add(1)
					if n > max {
						errs <- fmt.Errorf("%d holders, max %d", n, max)
					}
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					entries.Add(1)
					time.Sleep(2 * time.Millisecond)
					holders.Add(-1)
					if err := l.Release(ctx); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := entries.Load(); n != sessions*perSession*rounds {
		t.Errorf("%d entries, want %d", n, sessions*perSession*rounds)
	}
	t.Logf("peak %d holders of %d", peak.Load(), max)
}

// TestSemaphoreCancelWaiting: an acquirer that gives up leaves neither its
// lease node nor its mutex node.
func TestSemaphoreCancelWaiting(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b := connect(t), connect(t)
	dir := testDir(t)
	l, err := newSem(t, a, dir, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := newSem(t, b, dir, 1).Acquire(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with expiring ctx: %v", err)
	}
	queued(t, a, dir+"/leases", 1)
	queued(t, a, dir+"/locks", 0)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2, err := newSem(t, b, dir, 1).TryAcquire(ctx)
	if err != nil {
		t.Fatalf("TryAcquire after release: %v", err)
	}
	l2.Release(ctx)
}

// TestSemaphoreForeignChildren: nodes in leases/ that are not leases do not
// count.
func TestSemaphoreForeignChildren(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	sess := connect(t)
	dir := testDir(t)
	if err := sess.EnsurePath(ctx, dir+"/leases"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"readme", "lease-", "lease-xyz", "x-lease-12"} {
		if _, err := sess.Create(ctx, dir+"/leases/"+n, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	s := newSem(t, sess, dir, 1)
	l, err := s.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("TryAcquire with foreign children: %v", err)
	}
	if _, err := s.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Errorf("second TryAcquire: %v, want ErrNoLease", err)
	}
	l.Release(ctx)
}

// TestSemaphoreTryAcquireDoesNotWait: TryAcquire never queues behind the
// acquirers' mutex, whether its holder is waiting for a lease or has not
// created its lease node yet (so the leases count still shows room).
func TestSemaphoreTryAcquireDoesNotWait(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b, c := connect(t), connect(t), connect(t)
	dir := testDir(t)
	l1, err := newSem(t, a, dir, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// b waits for a lease, holding the acquirers' mutex.
	wctx, cancel := context.WithCancel(ctx)
	waiting := make(chan error, 1)
	go func() {
		l, err := newSem(t, b, dir, 1).Acquire(wctx)
		if err == nil {
			l.Release(ctx)
		}
		waiting <- err
	}()
	queued(t, a, dir+"/leases", 2)
	queued(t, a, dir+"/locks", 1)

	// A generous deadline: failing to acquire must not mean running out
	// of time.
	tryAcquire := func(what string) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		l, err := newSem(t, c, dir, 1).TryAcquire(tctx)
		if err == nil {
			l.Release(ctx)
			t.Fatalf("TryAcquire %s: acquired", what)
		}
		if !errors.Is(err, lock.ErrNoLease) || tctx.Err() != nil {
			t.Fatalf("TryAcquire %s: %v (ctx %v), want ErrNoLease before the deadline", what, err, tctx.Err())
		}
	}
	tryAcquire("while an Acquire waits holding the mutex")

	// The window in which the count is stale: an acquirer holds the mutex
	// but has no lease node yet. Hold the mutex through its own layout,
	// with every lease free.
	cancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting Acquire: %v, want context.Canceled", err)
	}
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	queued(t, a, dir+"/leases", 0)
	guard, err := newMutex(t, b, dir+"/locks").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tryAcquire("while the mutex is held and every lease is free")
	queued(t, a, dir+"/locks", 1)
	queued(t, a, dir+"/leases", 0)
	if err := guard.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := newSem(t, c, dir, 1).TryAcquire(ctx)
	if err != nil {
		t.Fatalf("TryAcquire once the mutex is free: %v", err)
	}
	l.Release(ctx)
}
