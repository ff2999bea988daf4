package election_test

import (
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/election"
)

// TestRecheckCatchesLostNotification: a follower whose notification of its
// predecessor's departure is lost still becomes leader, through the
// periodic re-check of the participants.
func TestRecheckCatchesLostNotification(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	first, err := newElection(t, sess, path, election.WithID("first")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := newElection(t, connect(t, shared.Servers()), path, election.WithID("next"),
		election.WithRecheck(time.Second))
	election.DropNextNotificationForTest(e)
	next, err := e.Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next.Role() != election.Following {
		t.Fatalf("next: %+v, want following", next.State())
	}
	if err := first.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, next.Elected(), long, "next elected without its notification")
	if !election.NotificationDroppedForTest(e) {
		t.Fatalf("no notification was dropped: the test proved nothing")
	}
	next.Resign(ctx)
}
