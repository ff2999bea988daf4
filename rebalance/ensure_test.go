package rebalance_test

import (
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/rebalance"
)

// A client joining a group that exists checks the group's six persistent
// nodes in one round trip, not six. The delay is large against the CPU cost
// of a request, so the count holds on a busy machine.
func TestEnsureExistingGroupIsOneRoundTrip(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	root, group := newRoot(t), "g"
	if err := rebalance.EnsureGroupForTest(ctx, connect(t), root, group); err != nil {
		t.Fatal(err)
	}
	proxy := cluster.NewProxy(t)
	sess := connect(t, proxy.Servers()...)
	if err := proxy.Delay(250 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	rt := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		if _, _, err := sess.Exists(ctx, "/"); err != nil {
			t.Fatal(err)
		}
		rt = min(rt, time.Since(start))
	}
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
