package election_test

import (
	"errors"
	"testing"

	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A revocation request reaches the acting leader as Revoked and an event;
// the leader still leads until it decides to resign. A request left from
// an earlier term does not reach the next leader; a new one does.
func TestRevokeReachesTheLeader(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	rec := newRecorder()
	first, err := newElection(t, connect(t, shared.Servers()), path, election.WithID("first"), election.WithEvents(rec.ch)).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin := newElection(t, connect(t, shared.Servers()), path)
	if _, err := admin.Revoke(ctx); err != nil {
		t.Fatal(err)
	}
	// Asked before it looked: the request is seen all the same.
	waitClosed(t, first.Revoked(), long, "first's revocation")
	if closed(first.Done()) {
		t.Fatal("a revocation request ended the leadership; the leader decides")
	}
	testkit.Eventually(t, long, "a revoke-requested event", func() bool {
		evs := rec.of(first.Node())
		return len(evs) > 0 && evs[len(evs)-1].Type == election.EventRevokeRequested
	})

	next, err := newElection(t, connect(t, shared.Servers()), path, election.WithID("next")).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, next.Elected(), long, "next elected")
	l := next.Leadership()
	revoked := l.Revoked()
	// The request for the first term is still in the node; the new leader
	// does not take it for its own (TestRevocationRequestNamesATerm), and
	// the second request is for the new term.
	asked, err := admin.Revoke(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if asked.ID != "next" || asked.Term != l.Term() || asked.Term <= first.Term() {
		t.Fatalf("Revoke asked %+v, want next in term %d (after %d)", asked, l.Term(), first.Term())
	}
	waitClosed(t, revoked, long, "next's revocation")
	l.Resign(ctx)
}

// A request made while nobody leads fails.
func TestRevokeWithoutLeader(t *testing.T) {
	ctx := testCtx(t, long)
	admin := newElection(t, connect(t, shared.Servers()), uniquePath(t))
	if _, err := admin.Revoke(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Revoke without participants: %v, want ErrNoLeader", err)
	}
}

// The revocation path must differ from the term and leader paths.
func TestRevokePathValidated(t *testing.T) {
	sess := connect(t, shared.Servers())
	path := uniquePath(t)
	if _, err := election.New(sess, path, election.WithRevokePath(path+"-term")); err == nil {
		t.Fatal("a revocation path equal to the term path was accepted")
	}
}
