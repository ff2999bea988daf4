package lock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/lock"
)

func newLimitedSem(t testing.TB, sess *zkcoord.Session, dir, limit string, max int) *lock.Semaphore {
	t.Helper()
	s, err := lock.NewSemaphore(sess, dir, max, lock.WithLimitFrom(limit))
	if err != nil {
		t.Fatalf("NewSemaphore: %v", err)
	}
	return s
}

// A Semaphore with WithLimitFrom follows the counter node: MaxLeases while
// it is missing, then its count; a waiter gets in as soon as the limit is
// raised, and a lowered limit grants nothing more while holders keep
// their leases.
func TestSemaphoreLimitFrom(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b := connect(t), connect(t)
	dir := testDir(t)
	limitPath := dir + "-limit"
	sa, sb := newLimitedSem(t, a, dir, limitPath, 1), newLimitedSem(t, b, dir, limitPath, 1)
	limit, err := counter.New(a, limitPath)
	if err != nil {
		t.Fatal(err)
	}
	checkLimit := func(want int) {
		t.Helper()
		if n, err := sb.Limit(ctx); err != nil || n != want {
			t.Fatalf("Limit = %d, %v; want %d", n, err, want)
		}
	}

	// No node: MaxLeases.
	checkLimit(1)
	var held []*lock.Lease
	l, err := sa.TryAcquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, l)
	if _, err := sb.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("second lease under the seed limit 1: %v, want ErrNoLease", err)
	}
	if exists, _, _ := a.Exists(ctx, limitPath); exists {
		t.Fatal("the Semaphore created the limit node")
	}

	// The counter says 3.
	if _, err := limit.SetCount(ctx, 3); err != nil {
		t.Fatal(err)
	}
	checkLimit(3)
	for range 2 {
		l, err := sb.TryAcquire(ctx)
		if err != nil {
			t.Fatalf("lease %d of 3: %v", len(held)+1, err)
		}
		held = append(held, l)
	}
	if _, err := sa.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("fourth lease under the limit 3: %v, want ErrNoLease", err)
	}

	// A waiter for two leases gets in when the limit, not the leases,
	// changes: it watches the counter.
	got := make(chan *lock.MultiLease, 1)
	go func() {
		ml, err := sa.AcquireN(ctx, 2) // more than MaxLeases: the limit may grow
		if err != nil {
			t.Error(err)
		}
		got <- ml
	}()
	queued(t, b, dir+"/leases", 5)
	if _, err := limit.SetCount(ctx, 4); err != nil {
		t.Fatal(err)
	}
	queued(t, b, dir+"/leases", 5)
	if len(got) > 0 {
		t.Fatal("two leases granted beside three under the limit 4")
	}
	if _, err := limit.SetCount(ctx, 5); err != nil {
		t.Fatal(err)
	}
	ml := <-got
	if ml == nil {
		t.FailNow()
	}
	held = append(held, ml.Leases()...)

	// Lowered to 2: the five holders keep their leases, and no one gets
	// a new one until fewer than two are held.
	if _, err := limit.SetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, l := range held {
		if err := l.Err(); err != nil {
			t.Fatalf("a holder lost its lease when the limit was lowered: %v", err)
		}
	}
	for len(held) > 1 {
		if _, err := sb.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
			t.Fatalf("a lease beside %d under the limit 2: %v, want ErrNoLease", len(held), err)
		}
		if err := held[0].Release(ctx); err != nil {
			t.Fatal(err)
		}
		held = held[1:]
	}
	l, err = sb.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("second lease under the limit 2: %v", err)
	}
	l.Release(ctx)
	held[0].Release(ctx)

	// A limit below 1 grants nothing.
	if _, err := limit.SetCount(ctx, -1); err != nil {
		t.Fatal(err)
	}
	checkLimit(0)
	if _, err := sb.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("a lease under the limit -1: %v, want ErrNoLease", err)
	}
	queued(t, b, dir+"/leases", 0)
}

// A limit node that holds no 4-byte count fails acquisitions and is left
// as it is; WithLimitFrom is a Semaphore's option only.
func TestSemaphoreLimitFromBadData(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	sess := connect(t)
	dir := testDir(t)
	limitPath := dir + "-limit"
	if _, err := sess.Create(ctx, limitPath, []byte("3"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	s := newLimitedSem(t, sess, dir, limitPath, 2)
	if _, err := s.TryAcquire(ctx); !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("TryAcquire with the limit node holding %q: %v, want ErrBadData", "3", err)
	}
	if _, err := s.Acquire(ctx); !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("Acquire with the limit node holding %q: %v, want ErrBadData", "3", err)
	}
	if data, _, err := sess.Get(ctx, limitPath); err != nil || string(data) != "3" {
		t.Fatalf("limit node holds %q, %v; want it untouched", data, err)
	}
	queued(t, sess, dir+"/leases", 0)
	queued(t, sess, dir+"/locks", 0)

	if _, err := lock.NewMutex(sess, dir, lock.WithLimitFrom(limitPath)); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Errorf("NewMutex with WithLimitFrom: %v, want ErrInvalidConfig", err)
	}
	if _, err := lock.NewRWMutex(sess, dir, lock.WithLimitFrom(limitPath)); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Errorf("NewRWMutex with WithLimitFrom: %v, want ErrInvalidConfig", err)
	}
	if _, err := lock.NewSemaphore(sess, dir, 1, lock.WithLimitFrom("relative")); err == nil {
		t.Error("NewSemaphore with a relative limit path succeeded")
	}
}
