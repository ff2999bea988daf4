package election_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// neverWaited is a lock-delay no test waits out: a test that finishes
// shows it was not waited.
const neverWaited = 10 * time.Minute

// campaignLater campaigns in the background.
func campaignLater(ctx context.Context, e *election.Election) <-chan *election.Leadership {
	out := make(chan *election.Leadership, 1)
	go func() {
		l, err := e.Campaign(ctx)
		if err != nil {
			l = nil
		}
		out <- l
	}()
	return out
}

// participantsAre waits until the election has n participants.
func participantsAre(t *testing.T, e *election.Election, n int) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("%d participants", n), func() error {
		ps, err := e.Participants(testCtx(t, 30*time.Second))
		if err != nil {
			return err
		}
		if len(ps) != n {
			return fmt.Errorf("%d participants", len(ps))
		}
		return nil
	})
}

// TestLockDelayAfterExpiry: the leader's session expires; the next
// candidate, waiting behind it or arriving after it, takes office only
// once the lock-delay has passed since the expiry began.
func TestLockDelayAfterExpiry(t *testing.T) {
	const d = 2 * time.Second
	for _, arriving := range []bool{false, true} {
		t.Run(fmt.Sprintf("arriving=%v", arriving), func(t *testing.T) {
			ctx := testCtx(t, long)
			path := uniquePath(t)
			a, b := connect(t, shared.Servers()), connect(t, shared.Servers())
			eb := newElection(t, b, path, election.WithLockDelay(d))
			if _, err := newElection(t, a, path, election.WithLockDelay(d)).Campaign(ctx); err != nil {
				t.Fatal(err)
			}
			var got <-chan *election.Leadership
			if !arriving {
				got = campaignLater(ctx, eb)
				participantsAre(t, eb, 2)
			}
			start := time.Now()
			if err := shared.ExpireSession(ctx, a.ID(), a.Password()); err != nil {
				t.Fatal(err)
			}
			if arriving {
				participantsAre(t, eb, 0)
				got = campaignLater(ctx, eb)
			}
			l := recv(t, got, long, "leadership")
			if l == nil {
				t.Fatal("Campaign failed")
			}
			if took := time.Since(start); took < d {
				t.Errorf("took office %v after the expiry, before the lock-delay of %v", took, d)
			}
			l.Resign(ctx)
		})
	}
}

// TestLockDelayCleanResign: a leader with a lock-delay that resigns marks
// its release; the candidate behind it, and one arriving after the next
// resignation, take office at once.
func TestLockDelayCleanResign(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	a, b := connect(t, shared.Servers()), connect(t, shared.Servers())
	ea, eb := newElection(t, a, path, election.WithLockDelay(neverWaited)), newElection(t, b, path, election.WithLockDelay(neverWaited))
	la, err := ea.Campaign(ctx)
	if err != nil {
		t.Fatalf("first Campaign of a new election: %v", err)
	}
	got := campaignLater(ctx, eb)
	participantsAre(t, eb, 2)
	if err := la.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	lb := recv(t, got, long, "leadership after a clean resignation")
	if lb == nil {
		t.Fatal("Campaign failed")
	}
	if err := lb.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	la, err = ea.Campaign(ctx)
	if err != nil {
		t.Fatalf("Campaign after a clean resignation: %v", err)
	}
	la.Resign(ctx)
	if data, _, err := a.Get(ctx, path); err != nil || string(data) != zkcoord.Base(la.Node()) {
		t.Fatalf("election node holds %q (%v), want the mark %q", data, err, zkcoord.Base(la.Node()))
	}
}

func TestLockDelayNegative(t *testing.T) {
	if _, err := election.New(connect(t, shared.Servers()), uniquePath(t), election.WithLockDelay(-time.Second)); err == nil {
		t.Fatal("New with a negative lock-delay: no error")
	}
}
