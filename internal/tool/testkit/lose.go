package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/zktest"
)

// A write whose reply is lost with the connection, or whose request never
// reaches the server, is the case a recipe's retry logic exists for. These
// helpers make either happen through a fault proxy. unknown must receive
// once the write under test has seen the connection drop and no longer
// knows its outcome (each package signals that through a test hook of its
// own).

// LoseReply runs write, on a Session connected through p, so that its
// request reaches the server and its reply is lost with the connection: the
// link is slowed by delay and cut as soon as observer (connected directly)
// sees the node at path change. It reports whether that happened (on a
// machine slower than the delay the reply gets through first) and what
// write returned.
func LoseReply(t testing.TB, ctx context.Context, p *zktest.Proxy, observer *zkcoord.Session, path string,
	delay time.Duration, unknown <-chan struct{}, write func() error) (lost bool, err error) {
	t.Helper()
	_, _, changed, err := observer.ExistsW(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Delay(delay); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	// Once committed, the reply is still in the slowed link.
	if returned, err := First(t, ctx, p, changed, done, "the write never reached the server"); returned {
		return false, err
	}
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	if returned, err := First(t, ctx, p, unknown, done, "the write never noticed the cut"); returned {
		return false, err
	}
	heal(t, p)
	return true, await(t, ctx, done)
}

// LoseRequest runs write, on a Session connected through p, so that its
// request never reaches the server: the proxy resets the connection on the
// next data it carries and drops that data. It checks that the node at
// path did not change, and reports whether the fault happened and what
// write returned.
func LoseRequest(t testing.TB, ctx context.Context, p *zktest.Proxy, observer *zkcoord.Session, path string,
	unknown <-chan struct{}, write func() error) (lost bool, err error) {
	t.Helper()
	_, before, err := observer.Exists(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ResetPeer(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	if returned, err := First(t, ctx, p, unknown, done, "the write never noticed the reset"); returned {
		return false, err
	}
	if _, st, err := observer.Exists(ctx, path); err != nil || st.Mzxid != before.Mzxid {
		t.Fatalf("the dropped request changed %s: %+v, %v", path, st, err)
	}
	heal(t, p)
	return true, await(t, ctx, done)
}

// UntilLost runs scenario with longer and longer delays until it reports
// that the fault happened, and fails the test if it never does.
func UntilLost(t testing.TB, scenario func(delay time.Duration) bool) {
	t.Helper()
	for _, d := range []time.Duration{time.Second, 3 * time.Second, 8 * time.Second} {
		if scenario(d) {
			return
		}
		t.Logf("the reply arrived despite a %v delay; trying a longer one", d)
	}
	t.Fatal("the reply was never lost: the fault was not exercised")
}

// First waits for ch, the sign of the fault's next step, or for the write
// to return before it: then it heals p and reports true with the write's
// result. It fails the test with never when ctx ends first. The step wins
// when both are there: a package's hook signals it before the write
// returns, so a write found returned after its step had happened is put
// back on done, for the caller to take later.
func First[T any](t testing.TB, ctx context.Context, p interface{ Heal() error }, ch <-chan T, done chan error, never string) (returned bool, err error) {
	t.Helper()
	select {
	case <-ch:
		return false, nil
	case err := <-done:
		select {
		case <-ch:
			done <- err
			return false, nil
		default:
		}
		heal(t, p)
		return true, err
	case <-ctx.Done():
		t.Fatal(never)
		return false, nil
	}
}

func heal(t testing.TB, p interface{ Heal() error }) {
	t.Helper()
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
}

// await returns the write's result, or fails the test when ctx ends first.
func await(t testing.TB, ctx context.Context, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatal("the write never returned")
		return nil
	}
}

// Signal sets *hook, a package's test hook, to a function that signals the
// returned channel without blocking, and clears it when the test ends.
func Signal(t testing.TB, hook *func()) <-chan struct{} {
	ch := make(chan struct{}, 1)
	*hook = func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { *hook = nil })
	return ch
}
