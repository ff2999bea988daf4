package gate

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: While's
// watcher must stop with its context.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var errShut = errors.New("shut")

// Wait returns once the gate opens, or with ctx's error.
func TestWait(t *testing.T) {
	g := New(false)
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on a shut gate = %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Wait(context.Background()) }()
	g.Set(true)
	if err := <-done; err != nil {
		t.Fatalf("Wait after Set(true) = %v", err)
	}
}

// While's context ends with the given cause once the gate shuts, and with
// context.Canceled when cancelled.
func TestWhile(t *testing.T) {
	g := New(true)
	ctx, cancel := g.While(context.Background(), errShut)
	defer cancel()
	g.Set(true) // no change: the context goes on
	select {
	case <-ctx.Done():
		t.Fatal("the context ended while the gate stayed open")
	default:
	}
	g.Set(false)
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, errShut) {
		t.Fatalf("cause = %v, want errShut", cause)
	}

	g.Set(true)
	ctx, cancel = g.While(context.Background(), errShut)
	cancel()
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
		t.Fatalf("cause after cancel = %v, want Canceled", cause)
	}

	shut, cancelShut := New(false).While(context.Background(), errShut)
	defer cancelShut()
	<-shut.Done()
	if cause := context.Cause(shut); !errors.Is(cause, errShut) {
		t.Fatalf("While on a shut gate: cause = %v, want errShut", cause)
	}
}
