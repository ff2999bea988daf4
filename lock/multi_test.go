package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

func mutexes(t *testing.T, sess *zkcoord.Session, paths ...string) []*lock.Mutex {
	t.Helper()
	var out []*lock.Mutex
	for _, p := range paths {
		m, err := lock.NewMutex(sess, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// Two MultiLocks over the same locks given in opposite orders take them in
// one order, so they exclude each other instead of deadlocking.
func TestMultiLockFixedOrder(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	dir := testDir(t)
	a, b := dir+"/a", dir+"/b"
	s1, s2 := connect(t), connect(t)
	ml1, err := lock.NewMultiLock(mutexes(t, s1, a, b)...)
	if err != nil {
		t.Fatal(err)
	}
	ml2, err := lock.NewMultiLock(mutexes(t, s2, b, a)...)
	if err != nil {
		t.Fatal(err)
	}
	held, err := ml1.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var second *lock.MultiLease
	go func() {
		var err error
		second, err = ml2.Lock(ctx)
		got <- err
	}()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	select {
	case err := <-got:
		t.Fatalf("the second MultiLock returned %v while the first held both locks", err)
	case <-short.Done():
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the second MultiLock after the release: %v", err)
	}
	leases := second.Leases()
	if len(leases) != 2 || leases[0].Token() >= leases[1].Token() {
		t.Fatalf("leases %v: want a then b, taken in that order", leases)
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A MultiLock that cannot take every lock holds none of them.
func TestMultiLockAllOrNothing(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	dir := testDir(t)
	a, b := dir+"/a", dir+"/b"
	other := connect(t)
	blocker := mutexes(t, other, b)[0]
	bl, err := blocker.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ml, _ := lock.NewMultiLock(mutexes(t, connect(t), a, b)...)
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if _, err := ml.Lock(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("MultiLock with b held elsewhere = %v; want DeadlineExceeded", err)
	}
	// a must be free again (its lease was released).
	probe := mutexes(t, other, a)[0]
	testkit.WaitFor(t, 30*time.Second, "a to be free", func() error {
		l, err := probe.TryLock(ctx)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	})
	if err := bl.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The MultiLease ends as soon as one of its locks is lost.
func TestMultiLeaseEndsWithAnyLock(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	dir := testDir(t)
	sess := connect(t)
	ml, _ := lock.NewMultiLock(mutexes(t, sess, dir+"/a", dir+"/b")...)
	held, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Err(); err != nil {
		t.Fatalf("Err while held = %v", err)
	}
	// Someone breaks lock b.
	if err := connect(t).Delete(ctx, held.Leases()[1].Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Done():
	case <-ctx.Done():
		t.Fatal("Done did not close when a lock was lost")
	}
	if !errors.Is(held.Err(), lock.ErrLost) {
		t.Fatalf("Err = %v; want lock.ErrLost", held.Err())
	}
	if err := held.Release(ctx); !errors.Is(err, lock.ErrLost) {
		t.Fatalf("Release = %v; want the lost lock's lock.ErrLost", err)
	}
}

func TestMultiLockArguments(t *testing.T) {
	sess := connect(t)
	if _, err := lock.NewMultiLock(); err == nil {
		t.Fatal("an empty MultiLock was accepted")
	}
	if _, err := lock.NewMultiLock(mutexes(t, sess, "/x", "/x")...); err == nil {
		t.Fatal("a MultiLock with one path twice was accepted")
	}
	if _, err := lock.NewMultiLock(nil); err == nil {
		t.Fatal("a nil Mutex was accepted")
	}
}
