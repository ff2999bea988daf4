package rebalance_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance"
)

// An assignment's fence guards writes while the client owns the resource,
// and refuses them once the resource has moved on.
func TestAssignmentFence(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	root := newRoot(t)
	sess := connect(t)
	addResources(t, sess, root, "g", "r1")
	got := make(chan rebalance.Assignment, 1)
	c := start(t, sess, root, "g", rebalance.Handler{
		Assigned: func(ctx context.Context, a rebalance.Assignment) error {
			got <- a
			return nil
		},
		Unassigned: func(rebalance.Assignment, error) error { return nil },
	})
	var a rebalance.Assignment
	select {
	case a = <-got:
	case <-ctx.Done():
		t.Fatal("never assigned")
	}
	if a.Barrier == "" || a.Fence().Token != a.Token {
		t.Fatalf("assignment %+v", a)
	}
	if err := sess.EnsurePath(ctx, root+"/out"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.GuardedSet(ctx, a.Fence(), root+"/out", []byte("owned"), -1); err != nil {
		t.Fatalf("a guarded write while owning: %v", err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.GuardedSet(ctx, a.Fence(), root+"/out", []byte("stale"), -1); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Fatalf("a guarded write after giving the resource up = %v; want ErrNotOwner", err)
	}
}
