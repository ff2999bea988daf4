package election_test

import (
	"errors"
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

// TestRecheckCatchesLostDeposition: a leader whose notification of a term
// bump is lost still steps down, through its periodic re-check of the term.
func TestRecheckCatchesLostDeposition(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	e := newElection(t, sess, path, election.WithRecheck(time.Second))
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	election.DropNextNotificationForTest(e)
	// Someone else takes the term, as a second leader would.
	if _, err := connect(t, shared.Servers()).Set(ctx, e.TermPath(), []byte(`{"id":"usurper","node":"/x"}`), -1); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, l.Done(), long, "deposed leader's Done without its notification")
	if !errors.Is(l.Err(), election.ErrDeposed) {
		t.Fatalf("Err = %v, want ErrDeposed", l.Err())
	}
	if !election.NotificationDroppedForTest(e) {
		t.Fatalf("no notification was dropped: the test proved nothing")
	}
	l.Resign(ctx)
}
