package election_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
)

// TestParticipants lists three candidates on two Sessions in election
// order, with their ids, sessions, tokens and the acting leader.
func TestParticipants(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sessions := []*zkcoord.Session{connect(t, shared.Servers()), connect(t, shared.Servers())}
	observer := newElection(t, connect(t, shared.Servers()), path)
	if ps, err := observer.Participants(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("Participants before any candidate: %v, %v", ps, err)
	}
	start := time.Now()
	var cands []*election.Candidate
	for i := 0; i < 3; i++ {
		c, err := newElection(t, sessions[i%2], path, election.WithID(fmt.Sprintf("p%d", i))).Nominate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cands = append(cands, c)
	}
	ps, err := observer.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("Participants: %+v, want 3", ps)
	}
	for i, p := range ps {
		if p.ID != fmt.Sprintf("p%d", i) || p.Node != cands[i].Node() || p.Session != sessions[i%2].ID() {
			t.Errorf("participant %d: %+v, want p%d on %s, session 0x%x", i, p, i, cands[i].Node(), sessions[i%2].ID())
		}
		if p.Leader != (i == 0) || p.Acting != (i == 0) {
			t.Errorf("participant %d: leader %v acting %v", i, p.Leader, p.Acting)
		}
		if p.Created.Before(start.Add(-time.Minute)) || p.Created.After(time.Now().Add(time.Minute)) {
			t.Errorf("participant %d created at %v", i, p.Created)
		}
	}
	if l := cands[0].Leadership(); l == nil || ps[0].Token != l.Token() {
		t.Fatalf("leader's token %d, leadership %v", ps[0].Token, l)
	}
	if !(ps[0].Token < ps[1].Token && ps[1].Token < ps[2].Token) {
		t.Errorf("tokens not increasing: %d %d %d", ps[0].Token, ps[1].Token, ps[2].Token)
	}

	if err := cands[0].Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, cands[1].Elected(), long, "p1 elected")
	ps, err = observer.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].ID != "p1" || !ps[0].Leader || !ps[0].Acting || ps[1].Leader {
		t.Fatalf("after the leader resigned: %+v", ps)
	}
	for _, c := range cands[1:] {
		c.Resign(ctx)
	}
}
