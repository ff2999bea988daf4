package rebalance_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// long is a lock-delay no test waits out: a test that finishes shows it
// was not waited.
const long = 10 * time.Minute

// TestLockDelayAfterExpiry: the session of the member running a resource
// expires; the member that takes the resource over, with a lock-delay,
// calls Assigned only once the delay has passed since the expiry, and so
// never while the expired member may still run it. The expired member has
// no lock-delay: every member marks its barriers.
func TestLockDelayAfterExpiry(t *testing.T) {
	const d = 2 * time.Second
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0")
	rec := newRecorder()
	ctx := testCtx(t, 90*time.Second)
	sa := connect(t)
	a := start(t, sa, root, group, rec.handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs r0", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0"})
	})
	starts := make(chan time.Time, 1)
	h := rec.handler("b")
	assigned := h.Assigned
	h.Assigned = func(ctx context.Context, as rebalance.Assignment) error {
		select {
		case starts <- time.Now():
		default:
		}
		return assigned(ctx, as)
	}
	b := start(t, connect(t), root, group, h, rebalance.WithLockDelay(d))
	testkit.WaitFor(t, 30*time.Second, "b joined", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, []string{"r0"})
	})
	begin := time.Now()
	if err := cluster.ExpireSession(ctx, sa.ID(), sa.Password()); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-starts:
		if took := at.Sub(begin); took < d {
			t.Errorf("b started r0 %v after a's session expired, before the lock-delay of %v", took, d)
		}
	case <-ctx.Done():
		t.Fatal("b did not start r0")
	}
	rec.check(t)
}

// TestLockDelayCleanHandover: in every mode, a resource that moves by a
// rebalancing, and one whose owner leaves the group, are handed over
// cleanly: the new owner does not wait its lock-delay. The old owner has
// no lock-delay and took the resources first (a first takeover would
// wait: nothing on record tells it from one after an expiry).
func TestLockDelayCleanHandover(t *testing.T) {
	for _, mode := range []rebalance.Mode{rebalance.Incremental, rebalance.ResourceBarrier, rebalance.GlobalBarrier} {
		t.Run(mode.String(), func(t *testing.T) {
			root, group := newRoot(t), "g"
			op := connect(t)
			resources := resourceIDs(2)
			addResources(t, op, root, group, resources...)
			rec := newRecorder()
			ctx := testCtx(t, 90*time.Second)
			a := start(t, connect(t), root, group, rec.handler("a"), rebalance.WithMode(mode))
			testkit.WaitFor(t, 30*time.Second, "a runs everything", func() error {
				return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources)
			})
			b := start(t, connect(t), root, group, rec.handler("b"), rebalance.WithMode(mode), rebalance.WithLockDelay(long))
			testkit.WaitFor(t, 30*time.Second, "a resource moved to b", func() error {
				return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, resources)
			})
			if err := a.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, 30*time.Second, "b runs everything", func() error {
				return balanced(ctx, op, root, group, []*rebalance.Client{b}, resources)
			})
			rec.check(t)
		})
	}
}

// TestLockDelayMarkGoesWithResource: RemoveResource deletes the
// resource's handover mark; the owner's release then deletes the barrier
// alone, without writing the mark again.
func TestLockDelayMarkGoesWithResource(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0")
	ctx := testCtx(t, 60*time.Second)
	a := start(t, connect(t), root, group, newRecorder().handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs r0", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0"})
	})
	mark := rebalance.HandoverForTest(root, group, "r0")
	if data, _, err := op.Get(ctx, mark); err != nil || string(data) != "held" {
		t.Fatalf("mark of r0 while a runs it: %q, %v; want held", data, err)
	}
	if err := rebalance.RemoveResource(ctx, op, zkcoord.Join(root, group), "r0"); err != nil {
		t.Fatal(err)
	}
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	testkit.WaitFor(t, 30*time.Second, "a released r0", func() error {
		if ok, _, err := op.Exists(ctx, barriers+"/r0"); err != nil || ok {
			return errors.Join(err, errors.New("the barrier of r0 is still there"))
		}
		if n := len(a.Assignments()); n != 0 {
			return errors.New("a still runs r0")
		}
		return nil
	})
	if ok, _, err := op.Exists(ctx, mark); err != nil || ok {
		t.Fatalf("mark of r0 after its removal: exists %v, %v", ok, err)
	}
}

// TestLockDelayBadInput: a negative lock-delay is refused before anything
// is written.
func TestLockDelayBadInput(t *testing.T) {
	root := newRoot(t)
	sess := connect(t)
	ctx := testCtx(t, 30*time.Second)
	_, err := rebalance.Start(ctx, sess, zkcoord.Join(root, "g"), rebalance.Handler{}, rebalance.WithLockDelay(-time.Second))
	if !errors.Is(err, rebalance.ErrInvalidOption) {
		t.Fatalf("Start with a negative lock-delay: %v, want ErrInvalidOption", err)
	}
	if ok, _, err := sess.Exists(ctx, root); err != nil || ok {
		t.Fatalf("group root after the refusal: exists %v, %v", ok, err)
	}
}
