package rebalance_test

import (
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/rebalance"
)

// A client joining a group that exists checks the group's six persistent
// nodes in one round trip, not six. The delay is large against the CPU cost
// of a request, so the count holds on a busy machine (see delayed).
func TestEnsureExistingGroupIsOneRoundTrip(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	root, group := newRoot(t), "g"
	if err := rebalance.EnsureGroupForTest(ctx, connect(t), root, group); err != nil {
		t.Fatal(err)
	}
	sess, rt := delayed(t, ctx)
	start := time.Now()
	if err := rebalance.EnsureGroupForTest(ctx, sess, root, group); err != nil {
		t.Fatal(err)
	}
	rts := float64(time.Since(start)) / float64(rt)
	t.Logf("round trip %v; ensuring the group took %.2f round trips", rt, rts)
	if rts > 1.5 {
		t.Fatalf("ensuring an existing group took %.2f round trips, want 1", rts)
	}
}
