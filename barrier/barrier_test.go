package barrier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// notWithin reports whether ch stays empty for d. It is only used to check
// that something has NOT happened yet, so a slow machine can only make it
// pass more easily, never fail spuriously.
func notWithin[T any](ch <-chan T, d time.Duration) bool {
	select {
	case <-ch:
		return false
	case <-time.After(d):
		return true
	}
}

func TestBarrierWaitBlocksUntilRemoved(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	owner := connect(t)
	b, err := New(owner, "/app/barrier")
	if err != nil {
		t.Fatal(err)
	}
	// Not set: Wait returns at once.
	if err := b.Wait(ctx); err != nil {
		t.Fatalf("Wait on an unset barrier: %v", err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatalf("second Set: %v", err)
	}
	if ok, err := b.IsSet(ctx); err != nil || !ok {
		t.Fatalf("IsSet = %v, %v; want true", ok, err)
	}

	const waiters = 3
	done := make(chan error, waiters)
	for range waiters {
		sess := connect(t)
		w, err := New(sess, "/app/barrier")
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- w.Wait(ctx) }()
	}
	if !notWithin(done, 300*time.Millisecond) {
		t.Fatal("a waiter passed a barrier that is set")
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	for range waiters {
		if err := <-done; err != nil {
			t.Fatalf("Wait: %v", err)
		}
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
}

func TestBarrierWaitEndsWithContextAndSession(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	b, _ := New(sess, "/b")
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := b.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with an expiring context = %v; want DeadlineExceeded", err)
	}

	other := connect(t)
	w, _ := New(other, "/b")
	done := make(chan error, 1)
	go func() { done <- w.Wait(ctx) }()
	if !notWithin(done, 200*time.Millisecond) {
		t.Fatal("Wait returned while the barrier is set")
	}
	other.Close(ctx)
	if err := <-done; !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Fatalf("Wait after the session closed = %v; want ErrSessionClosed", err)
	}
}

func TestEphemeralBarrierFallsWithItsSession(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	setter := connect(t)
	b, _ := New(setter, "/eph/barrier", WithEphemeral())
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	waiter := connect(t)
	w, _ := New(waiter, "/eph/barrier")
	done := make(chan error, 1)
	go func() { done <- w.Wait(ctx) }()
	if !notWithin(done, 200*time.Millisecond) {
		t.Fatal("Wait returned while the barrier is set")
	}
	setter.Close(ctx)
	if err := <-done; err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	sess := connect(t)
	for _, p := range []string{"", "rel", "/a/", "/a//b", "/"} {
		if _, err := New(sess, p); !errors.Is(err, zkcoord.ErrInvalidPath) {
			t.Errorf("New(%q) = %v; want ErrInvalidPath", p, err)
		}
		if _, err := NewDouble(sess, p, 2); !errors.Is(err, zkcoord.ErrInvalidPath) {
			t.Errorf("NewDouble(%q) = %v; want ErrInvalidPath", p, err)
		}
	}
	if _, err := NewDouble(sess, "/d", 0); !errors.Is(err, ErrMembers) {
		t.Errorf("NewDouble with 0 members = %v; want ErrMembers", err)
	}
}
