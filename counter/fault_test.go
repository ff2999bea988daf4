package counter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// throughProxy connects a Session whose traffic goes through a fault proxy.
func throughProxy(t *testing.T) (*zkcoord.Session, *zktest.Proxy) {
	p := cluster.NewProxy(t)
	return connect(t, func(c *zkcoord.Config) { c.Servers = p.Servers() }), p
}

// A TrySetCount whose reply is lost, its write applied, cannot know the
// write was its own: another writer may have written the same count from
// the same version. It fails with ErrOutcomeUnknown, and the node was
// written once.
func TestTrySetCountWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/try-%v", delay)
		first, err := mustCreate(t, ctx, mustCounter(t, observer, path)).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := mustCounter(t, sess, path)
		lost, err := testkit.LoseReply(t, ctx, p, observer, path, delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
			_, _, err = c.TrySetCount(ctx, first, 10)
			return err
		})
		if lost && !errors.Is(err, zkcoord.ErrOutcomeUnknown) {
			t.Fatalf("TrySetCount with a lost reply = %v; want ErrOutcomeUnknown", err)
		}
		want := Count{Value: 10, Version: first.Version + 1}
		if cur, err := mustCounter(t, observer, path).Get(ctx); err != nil || cur != want {
			t.Fatalf("node holds %+v, %v; want %+v, written once", cur, err, want)
		}
		return lost
	})
}

// An Add whose reply is lost never counts twice: it fails with
// ErrOutcomeUnknown, and the node holds one increment.
func TestAddWhoseReplyIsLostCountsOnce(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/add-%v", delay)
		first, err := mustCreate(t, ctx, mustCounter(t, observer, path, WithSeed(5))).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := mustCounter(t, sess, path, WithSeed(5))
		lost, err := testkit.LoseReply(t, ctx, p, observer, path, delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
			_, err = c.Add(ctx, 1)
			return err
		})
		if lost && !errors.Is(err, zkcoord.ErrOutcomeUnknown) {
			t.Fatalf("Add with a lost reply = %v; want ErrOutcomeUnknown", err)
		}
		want := Count{Value: 6, Version: first.Version + 1}
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
		first, err := mustCreate(t, ctx, mustCounter(t, observer, path)).Get(ctx)
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

// mustCreate creates c's node with its seed, as its first write would, so
// that a fault aimed at a later write meets that write.
func mustCreate[T Int](t *testing.T, ctx context.Context, c *Of[T]) *Of[T] {
	t.Helper()
	if err := c.create(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// throughFault connects a Session whose socket writes can be made to fail.
func throughFault(t *testing.T) (*zkcoord.Session, *testkit.WriteFault) {
	f := new(testkit.WriteFault)
	return connect(t, func(c *zkcoord.Config) { c.Dialer = f.Dial }), f
}

// Two Adds of 1 from 5 never both report success when the count went from
// 5 to 6 only. Here A's write is lost with its connection, and before A
// looks, B adds 1 from the same 5: the node then holds 6 at the next
// version, exactly what A's write would have made, yet A's write never
// happened. A cannot tell B's write from its own, so its Add fails with
// ErrOutcomeUnknown rather than count B's increment as its own.
func TestAddNeverTakesAnotherWritersEqualWriteForItsOwn(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess, f := throughFault(t)
	other := connect(t)
	a, b := mustCounter(t, sess, "/equal", WithSeed(5)), mustCounter(t, other, "/equal", WithSeed(5))
	mustCreate(t, ctx, a)
	var bErr error
	testHookOutcomeUnknown = func() { _, bErr = b.Add(ctx, 1) }
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
	hit := f.FailNext(testkit.OpSetData, "/equal")

	_, aErr := a.Add(ctx, 1)
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the fault was not exercised")
	}
	if bErr != nil {
		t.Fatalf("B's Add: %v", bErr)
	}
	cur, err := b.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Value != 6 {
		t.Fatalf("count = %d; want 6: B's increment alone", cur.Value)
	}
	if !errors.Is(aErr, zkcoord.ErrOutcomeUnknown) {
		t.Fatalf("A's Add = %v; want an error wrapping ErrOutcomeUnknown (two Adds of 1 reported on a count that went 5 -> 6)", aErr)
	}
	if zkcoord.IsRetryable(aErr) {
		t.Fatalf("A's Add = %v: an unknown outcome must not be retryable", aErr)
	}
}

// When the write that took the version A's write expected holds something
// else, A knows its own write failed: its Add reads again and counts once.
func TestAddAfterLostWriteAndOtherChangeCountsOnce(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess, f := throughFault(t)
	other := connect(t)
	a, b := mustCounter(t, sess, "/other", WithSeed(5)), mustCounter(t, other, "/other", WithSeed(5))
	mustCreate(t, ctx, a)
	var bErr error
	testHookOutcomeUnknown = func() { _, bErr = b.Add(ctx, 2) }
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
	hit := f.FailNext(testkit.OpSetData, "/other")

	got, err := a.Add(ctx, 1)
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the fault was not exercised")
	}
	if err != nil || bErr != nil {
		t.Fatalf("A's Add = %v, B's Add = %v; want both done", err, bErr)
	}
	cur, err := b.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Value != 8 || cur != got {
		t.Fatalf("A's Add returned %+v, node holds %+v; want 8 = 5 + 2 + 1", got, cur)
	}
}
