package rebalance_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

func TestStartValidation(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	sess := connect(t)
	if _, err := rebalance.Start(ctx, nil, "/g", rebalance.Handler{}); !errors.Is(err, rebalance.ErrInvalidOption) {
		t.Errorf("nil session: %v", err)
	}
	if _, err := rebalance.Start(ctx, sess, "/g", rebalance.Handler{}, rebalance.WithAutoRecovery(true)); !errors.Is(err, rebalance.ErrInvalidOption) {
		t.Errorf("auto-recovery with a caller's Session: %v", err)
	}
	if _, err := rebalance.Start(ctx, sess, "/g", rebalance.Handler{}, rebalance.WithSelfExpiry(0.1)); !errors.Is(err, rebalance.ErrInvalidOption) {
		t.Errorf("self-expiry stricter than the Session's: %v", err)
	}
	if _, err := rebalance.StartConfig(ctx, zkcoord.Config{}, "/g", rebalance.Handler{}); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Errorf("empty config: %v", err)
	}
}

// TestUnassignedPanicKeepsBarrier: a resource whose Unassigned keeps
// panicking may still be in use, so its barrier stays, and Stop waits,
// while Unassigned is called again and each failure reported; only the
// end of the Session (as when the process exits) lets another client in.
// The client ends once a call succeeds.
func TestUnassignedPanicKeepsBarrier(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0")
	rec := newRecorder()
	h := rec.handler("a")
	var stoppable atomic.Bool
	unassigned := h.Unassigned
	h.Unassigned = func(as rebalance.Assignment, cause error) error {
		if !stoppable.Load() {
			panic("cannot stop")
		}
		return unassigned(as, cause)
	}
	ctx := testCtx(t, 60*time.Second)
	stopCtx, giveUp := context.WithCancel(ctx)
	h.StopFailed = func(_ rebalance.Assignment, failures int, err error) {
		if failures == 3 && errors.Is(err, rebalance.ErrHandler) {
			giveUp()
		}
	}
	sess := connect(t)
	a, err := rebalance.Start(ctx, sess, zkcoord.Join(root, group), h, rebalance.WithMinInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stoppable.Store(true); a.Stop(ctx) })
	testkit.WaitFor(t, 30*time.Second, "a runs r0", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0"}) })
	if err := a.Stop(stopCtx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stop = %v while Unassigned kept failing; want it to wait until its context ended", err)
	}
	select {
	case <-a.Done():
		t.Fatalf("a ended (%v) while Unassigned kept failing", a.Err())
	default:
	}
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	if ok, _, err := op.Exists(ctx, barriers+"/r0"); err != nil || !ok {
		t.Fatalf("barrier gone after a failed Unassigned: %v %v", ok, err)
	}
	// Another client must wait until the Session ends.
	b := start(t, connect(t), root, group, rebalance.Handler{})
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "b runs r0", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{b}, []string{"r0"}) })
	stoppable.Store(true)
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("a did not end once Unassigned succeeded")
	}
	if a.Err() != nil || a.State() != rebalance.Stopped {
		t.Fatalf("Err %v, state %v; want Stopped", a.Err(), a.State())
	}
}

// TestCorruptStatus: foreign data in the status node stops a global-barrier
// group with a clear error.
func TestCorruptStatus(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0", "r1")
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	a := start(t, connect(t), root, group, rec.handler("a"), rebalance.WithMode(rebalance.GlobalBarrier))
	testkit.WaitFor(t, 30*time.Second, "settled", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0", "r1"})
	})
	term, _, _, _ := rebalance.PathsForTest(root, group)
	status := term[:len(term)-len("term")] + "status"
	if _, err := op.Set(ctx, status, []byte("<xml/>"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("client did not stop")
	}
	if !errors.Is(a.Err(), zkcoord.ErrBadData) {
		t.Fatalf("Err %v, want ErrBadData", a.Err())
	}
	if h := rec.holders(); len(h) != 0 {
		t.Fatalf("still running: %v", h)
	}
	rec.check(t)
}

// TestForeignNodes: names the group does not recognise are ignored.
func TestForeignNodes(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0", "r1")
	ctx := testCtx(t, 60*time.Second)
	_, _, _, clients := rebalance.PathsForTest(root, group)
	for _, n := range []string{"c_0000000000", "stranger", "_c_nope-c_1"} {
		if _, err := op.Create(ctx, clients+"/"+n, []byte("?"), zkcoord.FlagEphemeral); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder()
	a := start(t, connect(t), root, group, rec.handler("a"))
	b := start(t, connect(t), root, group, rec.handler("b"))
	testkit.WaitFor(t, 30*time.Second, "balanced", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, []string{"r0", "r1"})
	})
	d, err := rebalance.Describe(context.Background(), op, zkcoord.Join(root, group))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Members) != 2 {
		t.Fatalf("members %+v", d.Members)
	}
	rec.check(t)
}

// TestClientsShareSession: clients on one Session never take each other's
// barriers for their own.
func TestClientsShareSession(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(6)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	shared := connect(t)
	a := start(t, shared, root, group, rec.handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs everything", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources)
	})
	b := start(t, shared, root, group, rec.handler("b"))
	testkit.WaitFor(t, 30*time.Second, "shared", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, resources)
	})
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "b runs everything", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{b}, resources)
	})
	rec.check(t)
}
