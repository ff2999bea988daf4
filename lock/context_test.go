package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/lock"
)

// A lease's Context is cancelled when the lease ends, with the lease's Err
// as its cause: lost when its node is deleted, released on Release.
func TestLeaseContext(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	sess := connect(t)
	m := newMutex(t, sess, testDir(t))

	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if err := l.Context().Err(); err != nil {
		t.Fatalf("held lease: Context ended: %v", err)
	}
	if err := sess.Delete(ctx, l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Context().Done():
	case <-ctx.Done():
		t.Fatal("Context not cancelled after the lease's node was deleted")
	}
	if cause := context.Cause(l.Context()); !errors.Is(cause, lock.ErrNodeDeleted) || cause != l.Err() {
		t.Fatalf("cause %v, Err %v: want the same error, wrapping ErrNodeDeleted", cause, l.Err())
	}

	l, err = m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if cause := context.Cause(l.Context()); !errors.Is(cause, lock.ErrReleased) {
		t.Fatalf("after Release: cause %v, want ErrReleased", cause)
	}
}
