package counter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// throughProxy connects a Session whose traffic goes through a fault proxy.
func throughProxy(t *testing.T) (*zkcoord.Session, *zktest.Proxy) {
	p := cluster.NewProxy(t)
	return connect(t, func(c *zkcoord.Config) { c.Servers = p.Servers() }), p
}

// hookUnknown installs testHookOutcomeUnknown; the channel receives when a
// write's outcome has become unknown.
func hookUnknown(t *testing.T) <-chan struct{} {
	unknown := make(chan struct{}, 1)
	testHookOutcomeUnknown = func() {
		select {
		case unknown <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
	return unknown
}

func heal(t *testing.T, p *zktest.Proxy) {
	t.Helper()
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
}

// await returns write's result, or fails the test when ctx ends first.
func await(t *testing.T, ctx context.Context, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatal("the write never returned")
		return nil
	}
}

// loseReply runs write, through the proxied Session, so that its request
// reaches the server and its reply is lost with the connection: the link
// is slowed by delay and cut as soon as the observer sees the node at path
// change. It reports whether that happened (write saw the connection drop;
// on a machine slower than the delay the reply gets through first) and
// what write returned.
func loseReply(t *testing.T, ctx context.Context, p *zktest.Proxy, observer *zkcoord.Session, path string, delay time.Duration, write func() error) (lost bool, err error) {
	t.Helper()
	unknown := hookUnknown(t)
	_, _, changed, err := observer.ExistsW(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Delay(delay); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	select {
	case <-changed: // committed; the reply is still in the slowed link
	case err := <-done:
		heal(t, p)
		return false, err
	case <-ctx.Done():
		t.Fatal("the write never reached the server")
	}
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-unknown:
	case err := <-done:
		heal(t, p)
		return false, err
	case <-ctx.Done():
		t.Fatal("the write never noticed the cut")
	}
	heal(t, p)
	return true, await(t, ctx, done)
}

// loseRequest runs write, through the proxied Session, so that its request
// never reaches the server: the proxy resets the connection on the next
// data it carries and drops that data. It reports whether that happened and
// what write returned.
func loseRequest(t *testing.T, ctx context.Context, p *zktest.Proxy, observer *zkcoord.Session, path string, write func() error) (lost bool, err error) {
	t.Helper()
	unknown := hookUnknown(t)
	_, before, err := observer.Exists(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ResetPeer(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	select {
	case <-unknown:
	case err := <-done:
		heal(t, p)
		return false, err
	case <-ctx.Done():
		t.Fatal("the write never noticed the reset")
	}
	if _, st, err := observer.Exists(ctx, path); err != nil || st.Mzxid != before.Mzxid {
		t.Fatalf("the dropped request changed %s: %+v, %v", path, st, err)
	}
	heal(t, p)
	return true, await(t, ctx, done)
}

// untilLost runs scenario with longer and longer delays until the fault
// happened.
func untilLost(t *testing.T, scenario func(delay time.Duration) bool) {
	t.Helper()
	for _, d := range []time.Duration{time.Second, 3 * time.Second, 8 * time.Second} {
		if scenario(d) {
			return
		}
		t.Logf("the reply arrived despite a %v delay; trying a longer one", d)
	}
	t.Fatal("the reply was never lost: the fault was not exercised")
}

// A TrySetCount whose reply is lost is found to have happened: it reports
// success and the count it wrote, and the node was written once.
func TestTrySetCountWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	untilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/try-%v", delay)
		first, err := mustCounter(t, observer, path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var (
			c   = mustCounter(t, sess, path)
			got Count
			ok  bool
		)
		lost, err := loseReply(t, ctx, p, observer, path, delay, func() (err error) {
			got, ok, err = c.TrySetCount(ctx, first, 10)
			return err
		})
		if err != nil {
			t.Fatalf("TrySetCount with a lost reply: %v", err)
		}
		want := Count{Value: 10, Version: first.Version + 1}
		if !ok || got != want {
			t.Fatalf("TrySetCount = %+v, %v; want %+v, true", got, ok, want)
		}
		if cur, err := mustCounter(t, observer, path).Get(ctx); err != nil || cur != want {
			t.Fatalf("node holds %+v, %v; want %+v, written once", cur, err, want)
		}
		return lost
	})
}

// An Add whose reply is lost counts once, not twice.
func TestAddWhoseReplyIsLostCountsOnce(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	untilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/add-%v", delay)
		first, err := mustCounter(t, observer, path, Seed(5)).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var (
			c   = mustCounter(t, sess, path, Seed(5))
			got Count
		)
		lost, err := loseReply(t, ctx, p, observer, path, delay, func() (err error) {
			got, err = c.Add(ctx, 1)
			return err
		})
		if err != nil {
			t.Fatalf("Add with a lost reply: %v", err)
		}
		want := Count{Value: 6, Version: first.Version + 1}
		if got != want {
			t.Fatalf("Add = %+v; want %+v", got, want)
		}
		if cur, err := mustCounter(t, observer, path).Get(ctx); err != nil || cur != want {
			t.Fatalf("node holds %+v, %v; want %+v: one increment", cur, err, want)
		}
		return lost
	})
}

// A TrySetCount whose request never reached the server is sent again once
// reconnected, and succeeds.
func TestTrySetCountWhoseRequestIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	for attempt := 1; ; attempt++ {
		path := fmt.Sprintf("/req-%d", attempt)
		first, err := mustCounter(t, observer, path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var (
			c   = mustCounter(t, sess, path)
			got Count
			ok  bool
		)
		lost, err := loseRequest(t, ctx, p, observer, path, func() (err error) {
			got, ok, err = c.TrySetCount(ctx, first, 10)
			return err
		})
		if err != nil {
			t.Fatalf("TrySetCount with a lost request: %v", err)
		}
		want := Count{Value: 10, Version: first.Version + 1}
		if !ok || got != want {
			t.Fatalf("TrySetCount = %+v, %v; want %+v, true", got, ok, want)
		}
		if cur, err := mustCounter(t, observer, path).Get(ctx); err != nil || cur != want {
			t.Fatalf("node holds %+v, %v; want %+v", cur, err, want)
		}
		if lost {
			return
		}
		if attempt == 3 {
			t.Fatal("the request was never lost: the fault was not exercised")
		}
	}
}

func mustCounter(t *testing.T, sess *zkcoord.Session, path string, opts ...Option) *Counter {
	t.Helper()
	c, err := New(sess, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
