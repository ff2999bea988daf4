package election_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/zktest"
)

// oneWay is the delay the round-trip tests add in each direction: large
// against the CPU cost of a request, so that round trips dominate.
const oneWay = 500 * time.Millisecond

// measureRoundTrip times a read through a delayed Session.
func measureRoundTrip(t *testing.T, sess *zkcoord.Session) time.Duration {
	t.Helper()
	ctx := testCtx(t, long)
	best := time.Duration(1 << 62)
	for i := 0; i < 3; i++ {
		start := time.Now()
		if _, _, err := sess.Exists(ctx, "/"); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	return best
}

// TestFailoverRoundTrips: after a graceful resignation, the successor leads
// one notification plus two round trips later (the listing with the term
// read, then the transaction with the term watch right behind it), not
// three or four. The delay is large
// against the CPU cost of the requests, so the count holds on a busy
// machine.
func TestFailoverRoundTrips(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	proxy := shared.NewProxy(t)
	first, err := newElection(t, connect(t, shared.Servers()), path, election.WithID("first")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sess := connect(t, proxy.Servers())
	e := newElection(t, sess, path, election.WithID("next"))
	next, err := e.Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkFailover(t, proxy, sess, first, next)
}

// checkFailover delays the link of sess, the Session of next, resigns
// leader and fails the test unless next leads within half a round trip
// (the notification) plus two. The clock starts once the leader's node is
// deleted: the notification is then on its way.
func checkFailover(t *testing.T, proxy *zktest.Proxy, sess *zkcoord.Session,
	leader interface{ Resign(context.Context) error }, next *election.Candidate) {
	t.Helper()
	ctx := testCtx(t, long)
	if err := proxy.Delay(oneWay); err != nil {
		t.Fatal(err)
	}
	rt := measureRoundTrip(t, sess)
	if err := leader.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitClosed(t, next.Elected(), long, "next elected")
	took := time.Since(start)
	rts := float64(took) / float64(rt)
	t.Logf("round trip %v; failover %v after the resignation = %.2f round trips (notification included)", rt, took, rts)
	if rts > 3 {
		t.Fatalf("failover took %.2f round trips, want half a round trip for the notification + 2", rts)
	}
	next.Resign(ctx)
}

// TestFailoverDownTheLineRoundTrips: the third candidate, which last
// looked when it was third in line, leads as fast after the second one's
// resignation as the second did after the first's: its listing carries the
// term read although it could not know it had become next in line.
func TestFailoverDownTheLineRoundTrips(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	proxy := shared.NewProxy(t)
	first, err := newElection(t, connect(t, shared.Servers()), path, election.WithID("first")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, err := newElection(t, connect(t, shared.Servers()), path, election.WithID("second")).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sess := connect(t, proxy.Servers())
	third, err := newElection(t, sess, path, election.WithID("third")).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, second.Elected(), long, "second elected")
	checkFailover(t, proxy, sess, second, third)
}

// TestFirstElectionRoundTrips: a lone candidate in an election whose
// nodes exist (all earlier candidates left) leads four round trips after
// Campaign starts (ended check, create, listing with the node's stat and
// the term, transaction with the term and node watches right behind it),
// not seven. A child that is not a participant keeps the election's
// container from being reaped by the server once the earlier candidate
// left: a reaped container would be created again, which is not what is
// measured here.
func TestFirstElectionRoundTrips(t *testing.T) {
	ctx := testCtx(t, long)
	proxy := shared.NewProxy(t)
	sess := connect(t, proxy.Servers())
	path := uniquePath(t)
	e := newElection(t, sess, path)
	earlier, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, path+"/keep", nil, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	if err := earlier.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := proxy.Delay(oneWay); err != nil {
		t.Fatal(err)
	}
	rt := measureRoundTrip(t, sess)
	start := time.Now()
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	rts := float64(took) / float64(rt)
	t.Logf("round trip %v; first election %v = %.2f round trips", rt, took, rts)
	if rts > 4.5 {
		t.Fatalf("first election took %.2f round trips, want 4", rts)
	}
	l.Resign(ctx)
}
