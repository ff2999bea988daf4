package rebalance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// oneWay is the delay the round-trip tests put on each direction: large
// against the CPU cost of a request, so the counts hold on a busy machine.
const oneWay = 250 * time.Millisecond

// delayed returns a Session whose requests take one round trip of
// 2*oneWay, and that round trip as measured.
func delayed(t *testing.T, ctx context.Context) (*zkcoord.Session, time.Duration) {
	t.Helper()
	proxy := cluster.NewProxy(t)
	sess := connect(t, proxy.Servers()...)
	if err := proxy.Delay(oneWay); err != nil {
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
	return sess, rt
}

// What a join and a rebalancing do to an existing group cost one round
// trip each: a client making sure the group's persistent nodes exist
// (not one round trip each), and a coordinator reading the clients, the
// resources and the allocation (not three).
func TestGroupOperationsAreOneRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   func(ctx context.Context, sess *zkcoord.Session, root, group string) error
	}{
		{"ensuring the group", rebalance.EnsureGroupForTest},
		{"reading the group", rebalance.ReadGroupForTest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, time.Minute)
			root, group := newRoot(t), "g"
			if err := rebalance.EnsureGroupForTest(ctx, connect(t), root, group); err != nil {
				t.Fatal(err)
			}
			sess, rt := delayed(t, ctx)
			start := time.Now()
			if err := tc.op(ctx, sess, root, group); err != nil {
				t.Fatal(err)
			}
			rts := float64(time.Since(start)) / float64(rt)
			t.Logf("round trip %v; %s took %.2f round trips", rt, tc.name, rts)
			if rts > 1.5 {
				t.Fatalf("%s took %.2f round trips, want 1", tc.name, rts)
			}
		})
	}
}

// A member waiting to take a resource over holds its own barrier two and
// a half round trips after the giver deleted its own: the notification,
// the read of the handover mark, and the create sent together with the
// read that learns the token and sets the watch. It does not look for the
// barrier again before creating it, nor read it twice after.
func TestBarrierTakeoverRoundTrips(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	path := newRoot(t) + "/barrier"
	giver := connect(t)
	if err := giver.EnsurePath(ctx, zkcoord.Parent(path)); err != nil {
		t.Fatal(err)
	}
	if _, err := giver.Create(ctx, path, []byte(`{"client":"c_0000000001"}`), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	taker, rt := delayed(t, ctx)
	type result struct {
		token int64
		err   error
		at    time.Time
	}
	got := make(chan result, 1)
	go func() {
		token, err := rebalance.AcquireBarrierForTest(ctx, taker, path, "c_0000000002")
		got <- result{token, err, time.Now()}
	}()
	// The taker waits once the server holds its watch on the barrier.
	testkit.Eventually(t, 30*time.Second, "the taker to watch the barrier", func() bool {
		out, err := cluster.Server(0).FourLetter(ctx, "wchp")
		return err == nil && strings.Contains(out, path)
	})
	deleted := time.Now()
	if err := giver.Delete(ctx, path, -1); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	_, st, err := giver.Get(ctx, path)
	if err != nil || st.Czxid != r.token || st.EphemeralOwner != taker.ID() {
		t.Fatalf("barrier after the takeover: %+v, %v; token %d", st, err, r.token)
	}
	rts := float64(r.at.Sub(deleted)) / float64(rt)
	t.Logf("round trip %v; the takeover took %.2f round trips after the delete", rt, rts)
	if rts > 3 {
		t.Fatalf("the takeover took %.2f round trips after the delete, want 2.5", rts)
	}
}
