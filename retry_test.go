package zkcoord_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// errLoss is what an operation returns when its connection dropped.
var errLoss = fmt.Errorf("get /x: %w", zkcoord.ErrConnectionClosed)

// Retry repeats an operation that failed with a connection loss and returns
// as soon as it succeeds.
func TestRetrySucceedsAfterConnectionLoss(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	ctx := testCtx(t, 30*time.Second)
	if _, err := s.Create(ctx, "/value", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	calls := 0
	var got []byte
	err := s.Retry(ctx, func(ctx context.Context) error {
		calls++
		if calls <= 3 {
			return errLoss
		}
		data, _, err := s.Get(ctx, "/value")
		got = data
		return err
	})
	if err != nil || calls != 4 || string(got) != "v" {
		t.Fatalf("Retry = %v after %d calls, value %q; want nil after 4 calls, value %q", err, calls, got, "v")
	}
}

// Any other error ends Retry at once.
func TestRetryReturnsOtherErrorsAtOnce(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	ctx := testCtx(t, 30*time.Second)
	calls := 0
	err := s.Retry(ctx, func(ctx context.Context) error {
		calls++
		_, _, err := s.Get(ctx, "/missing")
		return err
	})
	if !errors.Is(err, zkcoord.ErrNoNode) || calls != 1 {
		t.Fatalf("Retry = %v after %d calls, want ErrNoNode after 1 call", err, calls)
	}
}

// retryForever runs Retry with an operation that always loses its
// connection, and reports Retry's result and how often it was called.
func retryForever(ctx context.Context, s *zkcoord.Session) (<-chan error, *atomic.Int32) {
	calls := new(atomic.Int32)
	done := make(chan error, 1)
	go func() {
		done <- s.Retry(ctx, func(context.Context) error {
			calls.Add(1)
			return errLoss
		})
	}()
	return done, calls
}

func retryResult(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("Retry did not stop")
		return nil
	}
}

// Retry stops when its context ends, with the context's error.
func TestRetryStopsWithContext(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers()})
	ctx, cancel := context.WithCancel(testCtx(t, 30*time.Second))
	done, calls := retryForever(ctx, s)
	testkit.Eventually(t, 10*time.Second, "three attempts", func() bool { return calls.Load() >= 3 })
	cancel()
	if err := retryResult(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Retry = %v, want context.Canceled", err)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("session ended: %v", err)
	}
}

// Retry stops when the Session ends, with the Session's error.
func TestRetryStopsWithSession(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers()})
	ctx := testCtx(t, 30*time.Second)
	done, calls := retryForever(ctx, s)
	testkit.Eventually(t, 10*time.Second, "three attempts", func() bool { return calls.Load() >= 3 })
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := retryResult(t, done); !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Fatalf("Retry = %v, want ErrSessionClosed", err)
	}
}
