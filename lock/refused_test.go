package lock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/lock"
)

// A TryLock or TryAcquire that is turned away has deleted its node by the
// time it returns: a node left behind for a moment would turn the next
// contender away although the lock, or a lease, is free. Another Session
// looks at once.
func TestRefusedTryLeavesNoNode(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b, observer := connect(t), connect(t), connect(t)
	dir := testDir(t)

	held, err := newMutex(t, a, dir).TryLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	for i := range 5 {
		if _, err := newMutex(t, b, dir).TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("TryLock of a held mutex: %v, want ErrLocked", err)
		}
		if kids, _, err := observer.Children(ctx, dir); err != nil || len(kids) != 1 {
			t.Fatalf("after refused TryLock %d the mutex has %v (%v); want the holder's node alone", i+1, kids, err)
		}
	}

	sdir := testDir(t) + "-sem"
	lease, err := newSem(t, a, sdir, 1).TryAcquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	for i := range 5 {
		if _, err := newSem(t, b, sdir, 1).TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
			t.Fatalf("TryAcquire of a full semaphore: %v, want ErrNoLease", err)
		}
		if kids, _, err := observer.Children(ctx, sdir+"/leases"); err != nil || len(kids) != 1 {
			t.Fatalf("after refused TryAcquire %d the semaphore has leases %v (%v); want the holder's alone", i+1, kids, err)
		}
	}
}
