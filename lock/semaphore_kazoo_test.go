package lock_test

import (
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

var kazooLeaseNode = regexp.MustCompile(`^[0-9a-f]{32}$`)

func newKazooSem(t testing.TB, sess *zkcoord.Session, dir string, max int) *lock.Semaphore {
	t.Helper()
	s, err := lock.NewSemaphore(sess, dir, max, lock.WithKazooLayout(), lock.WithData([]byte("go")))
	if err != nil {
		t.Fatalf("NewSemaphore: %v", err)
	}
	return s
}

// TestInteropKazooSemaphore: Kazoo's Semaphore and a Semaphore in Kazoo's
// layout share one limit and one queue of acquirers; a Semaphore in
// Curator's layout and a Mutex refuse the path; in loops they never hold
// more than the limit together.
func TestInteropKazooSemaphore(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	const max = 3
	kz := startKazoo(t)
	a, b := connect(t), connect(t)
	sa, sb := newKazooSem(t, a, dir, max), newKazooSem(t, b, dir, max)

	kz.send(t, fmt.Sprintf("s1 semhold %s %d", dir, max))
	kz.mustExpect(t, ctx, "s1", "held")
	l1, err := sa.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("second lease: %v", err)
	}
	if zkcoord.Parent(l1.Path()) != dir || !kazooLeaseNode.MatchString(zkcoord.Base(l1.Path())) {
		t.Errorf("lease node %s does not have Kazoo's layout", l1.Path())
	}
	if data, _, err := a.Get(ctx, dir); err != nil || string(data) != "3" {
		t.Errorf("semaphore node holds %q, %v; want Kazoo's limit %q", data, err, "3")
	}
	if _, err := sb.TryAcquireN(ctx, 2); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("two leases beside two of 3: %v, want ErrNoLease", err)
	}
	l2, err := sb.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("third lease: %v", err)
	}
	kz.send(t, fmt.Sprintf("t1 semtry %s %d", dir, max))
	if f := kz.mustExpect(t, ctx, "t1", "tried"); f[0] != "false" {
		t.Fatal("Kazoo got a fourth lease")
	}
	holders, _, err := sa.Holders(ctx)
	if err != nil || len(holders) != 3 {
		t.Fatalf("Holders: %v, %v; want three", holders, err)
	}

	// Other kinds refuse the path.
	if _, err := newSem(t, a, dir, max).TryAcquire(ctx); !errors.Is(err, lock.ErrOtherKind) {
		t.Fatalf("Curator's layout beside Kazoo's leases: %v, want ErrOtherKind", err)
	}
	queued(t, a, dir, 3)
	if _, err := newMutex(t, a, dir).TryLock(ctx); !errors.Is(err, lock.ErrOtherKind) {
		t.Fatalf("Mutex beside Kazoo's leases: %v, want ErrOtherKind", err)
	}
	if _, err := newKazooSem(t, a, dir, 2).TryAcquire(ctx); !errors.Is(err, lock.ErrLimitMismatch) {
		t.Fatalf("another limit: %v, want ErrLimitMismatch", err)
	}

	// A Go acquirer waits in Kazoo's lock, a Kazoo one behind it; the
	// first freed lease goes to Go, the next to Kazoo.
	got := make(chan *lock.Lease, 1)
	go func() {
		l, err := sb.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	queued(t, a, dir+"-__lock__", 1)
	kz.send(t, fmt.Sprintf("s2 semhold %s %d", dir, max))
	queued(t, a, dir+"-__lock__", 2)
	kz.send(t, "s1 release")
	kz.mustExpect(t, ctx, "s1", "released")
	l3 := <-got
	if l3 == nil {
		t.FailNow()
	}
	if kz.pending("s2") {
		t.Fatal("Kazoo got a lease beyond the limit")
	}
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	kz.mustExpect(t, ctx, "s2", "held")
	l2.Release(ctx)
	l3.Release(ctx)
	kz.send(t, "s2 release")
	kz.mustExpect(t, ctx, "s2", "released")
	queued(t, a, dir, 0)
	if _, err := newSem(t, a, dir, max).TryAcquire(ctx); !errors.Is(err, lock.ErrOtherKind) {
		t.Fatalf("Curator's layout in Kazoo's semaphore node: %v, want ErrOtherKind", err)
	}
	queued(t, a, dir, 0) // and leaves nothing that Kazoo would count

	const rounds = 6
	c := newChecker(t, a, chk, "sem", max)
	kz.send(t, fmt.Sprintf("L semloop %s %d 3 %d %s", dir, max, rounds, chk))
	res := semLoop(ctx, "go", c, rounds, []*lock.Semaphore{sa, sb, newKazooSem(t, b, dir, max)}, []int{1, 2, 1})
	res.check(t, "zkcoord", 4*rounds)
	kz.checkLoop(t, ctx, "L", 3*rounds)
	checkFree(t, c)
}

// A Semaphore in Kazoo's layout refuses a path that holds a Mutex's
// contenders, and the option goes with no other lock and no WithLimitFrom.
func TestSemaphoreKazooLayoutOtherKind(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	sess := connect(t)
	dir := testDir(t)
	l, err := newMutex(t, sess, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newKazooSem(t, sess, dir, 2).TryAcquire(ctx); !errors.Is(err, lock.ErrOtherKind) {
		t.Fatalf("Kazoo's layout beside a Mutex: %v, want ErrOtherKind", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.NewSemaphore(sess, dir, 2, lock.WithKazooLayout(), lock.WithLimitFrom(dir+"-limit")); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Errorf("WithKazooLayout and WithLimitFrom: %v, want ErrInvalidConfig", err)
	}
	if _, err := lock.NewMutex(sess, dir, lock.WithKazooLayout()); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Errorf("NewMutex with WithKazooLayout: %v, want ErrInvalidConfig", err)
	}
}
