package counter

import (
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

// A TrySetCount whose reply is lost is found to have happened: it reports
// success and the count it wrote, and the node was written once.
func TestTrySetCountWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
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
		lost, err := testkit.LoseReply(t, ctx, p, observer, path, delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
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
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/add-%v", delay)
		first, err := mustCounter(t, observer, path, Seed(5)).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var (
			c   = mustCounter(t, sess, path, Seed(5))
			got Count
		)
		lost, err := testkit.LoseReply(t, ctx, p, observer, path, delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
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
		lost, err := testkit.LoseRequest(t, ctx, p, observer, path, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
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
