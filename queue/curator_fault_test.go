package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// onlyItem returns the path of the one item under path.
func onlyItem(t *testing.T, ctx context.Context, sess *zkcoord.Session, path string) string {
	t.Helper()
	c, _, err := sess.Children(ctx, path)
	if err != nil || len(c) != 1 {
		t.Fatalf("children of %s: %v, %v; want one item", path, c, err)
	}
	return zkcoord.Join(path, c[0])
}

// With a lock path, a take whose acknowledgement commits and whose reply
// is lost still delivers the item, and nobody else gets it.
func TestCuratorLockedTakeWhoseReplyIsLostStillDelivers(t *testing.T) {
	ctx := testkit.Ctx(t, 3*time.Minute)
	proxy := cluster.NewProxy(t)
	sess := connect(t, func(c *zkcoord.Config) { c.Servers = proxy.Servers() })
	observer := connect(t)
	n := 0
	testkit.UntilLost(t, func(delay time.Duration) bool {
		n++
		path := fmt.Sprintf("/q%d", n)
		q, _ := NewCurator(sess, path, WithLockPath(path+"-locks"))
		other, _ := NewCurator(observer, path, WithLockPath(path+"-locks"))
		if err := q.Put(ctx, []byte("x")); err != nil {
			t.Fatal(err)
		}
		var items [][]byte
		lost, err := testkit.LoseReply(t, ctx, proxy, observer, onlyItem(t, ctx, observer, path), delay,
			testkit.Signal(t, &testHookAckUnknown), func() error {
				var err error
				items, err = q.Take(ctx)
				return err
			})
		if err != nil || joined(items) != "x" {
			t.Fatalf("Take with a lost reply = %q, %v; want x", joined(items), err)
		}
		if items, err := other.TryTake(ctx); !errors.Is(err, ErrEmpty) {
			t.Fatalf("another taker got %q, %v; want ErrEmpty", joined(items), err)
		}
		if locks, _, err := observer.Children(ctx, path+"-locks"); err != nil || len(locks) > 0 {
			t.Fatalf("locks after the take: %v, %v", locks, err)
		}
		return lost
	})
}

// Without a lock path, a take whose delete commits and whose reply is lost
// cannot tell its delete from another taker's: it says so, and the item is
// gone for everyone (at most once).
func TestCuratorTakeWhoseReplyIsLostReportsUnknownOutcome(t *testing.T) {
	ctx := testkit.Ctx(t, 3*time.Minute)
	proxy := cluster.NewProxy(t)
	sess := connect(t, func(c *zkcoord.Config) { c.Servers = proxy.Servers() })
	observer := connect(t)
	n := 0
	testkit.UntilLost(t, func(delay time.Duration) bool {
		n++
		path := fmt.Sprintf("/q%d", n)
		q, _ := NewCurator(sess, path)
		other, _ := NewCurator(observer, path)
		if err := q.Put(ctx, []byte("x")); err != nil {
			t.Fatal(err)
		}
		var items [][]byte
		lost, err := testkit.LoseReply(t, ctx, proxy, observer, onlyItem(t, ctx, observer, path), delay,
			testkit.Signal(t, &testHookDeleteUnknown), func() error {
				var err error
				items, err = q.Take(ctx)
				return err
			})
		switch {
		case lost && !errors.Is(err, ErrOutcomeUnknown):
			t.Fatalf("Take with a lost reply = %q, %v; want ErrOutcomeUnknown", joined(items), err)
		case !lost && (err != nil || joined(items) != "x"):
			t.Fatalf("Take = %q, %v; want x", joined(items), err)
		}
		if items, err := other.TryTake(ctx); !errors.Is(err, ErrEmpty) {
			t.Fatalf("another taker got %q, %v; want ErrEmpty", joined(items), err)
		}
		return lost
	})
}

// The taker's Session is lost while its delete is in flight: Take says the
// outcome is unknown. Here the delete never arrived, so the item is still
// there for another taker.
func TestCuratorTakeOnLostSessionReportsUnknownOutcome(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	partitioned, proxy := throughProxy(t, 4*time.Second)
	a, _ := NewCurator(partitioned, "/q")
	b, _ := NewCurator(connect(t), "/q")
	if err := b.Put(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	hooks(t, func(string) {
		if err := proxy.Blackhole(); err != nil {
			t.Error(err)
		}
	}, nil)
	_, err := a.Take(ctx)
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, zkcoord.ErrSessionLost) {
		t.Fatalf("Take = %v; want ErrOutcomeUnknown and ErrSessionLost", err)
	}
	mustTake(t, ctx, b, "x")
}

// A Put whose create commits and whose reply is lost, and whose item a
// taker takes before the putter is connected again: with a lock path the
// Put finds its receipt and succeeds, and the item is added once; without
// one it fails with ErrOutcomeUnknown, and the item is there once too.
func TestCuratorPutWhoseReplyIsLost(t *testing.T) {
	for _, m := range curatorModes {
		t.Run(m.name, func(t *testing.T) {
			n := 0
			testkit.UntilLost(t, func(delay time.Duration) bool {
				n++
				return curatorPutLost(t, fmt.Sprintf("/q%d", n), m.lock, delay)
			})
		})
	}
}

func curatorPutLost(t *testing.T, path string, lock bool, delay time.Duration) (exercised bool) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	putter, proxy := throughProxy(t, testkit.SessionTimeout)
	observer := connect(t)
	var opts []Option
	if lock {
		opts = append(opts, WithLockPath(path+"-locks"))
	}
	p, _ := NewCurator(putter, path, opts...)
	taker, _ := NewCurator(observer, path, opts...)
	if err := observer.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	_, _, added, err := observer.ChildrenW(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	unknown := testkit.Signal(t, &testHookPutUnknown)
	if err := proxy.Delay(delay); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Put(ctx, []byte("once")) }()
	if returned(t, ctx, proxy, added, done) {
		return false
	}
	// Someone takes the item before the putter hears of it.
	mustTake(t, ctx, taker, "once")
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	if returned(t, ctx, proxy, unknown, done) {
		return false
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if lock && err != nil {
			t.Fatalf("Put with a lock path = %v; want nil", err)
		}
		if !lock && !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("Put without a lock path = %v; want ErrOutcomeUnknown", err)
		}
	case <-ctx.Done():
		t.Fatal("Put never returned")
	}
	if items, err := taker.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("the item was added twice: TryTake gave %q, %v", joined(items), err)
	}
	return true
}

// returned is testkit.First for a write that must not fail when it
// returns before the step.
func returned[T any](t *testing.T, ctx context.Context, proxy interface{ Heal() error }, step <-chan T, done chan error) bool {
	t.Helper()
	ok, err := testkit.First(t, ctx, proxy, step, done, "the put never got that far")
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
