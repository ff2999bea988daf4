package election_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// observeUntil reads observations until one satisfies ok, and returns it.
func observeUntil(t *testing.T, obs <-chan election.Leader, what string, ok func(election.Leader) bool) election.Leader {
	t.Helper()
	for {
		if l := recv(t, obs, long, what); ok(l) {
			return l
		}
	}
}

// TestProclaim: a leader advertises the value it was given from the moment
// it takes office, and replaces it with Proclaim; observers, Leader and
// Participants see each value, with the rest of the leader unchanged.
func TestProclaim(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	octx, stop := context.WithCancel(ctx)
	defer stop()
	obs := newElection(t, connect(t, shared.Servers()), path).Observe(octx).Changes()
	e := newElection(t, sess, path, election.WithID("one"), election.WithValue("10.0.0.1:80"))
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := election.Leader{ID: "one", Node: l.Node(), Token: l.Token(), Session: sess.ID(), Acting: true, Term: l.Term(), Value: "10.0.0.1:80"}
	if got := observeUntil(t, obs, "the acting leader", func(o election.Leader) bool { return o.Acting }); got != want {
		t.Fatalf("observed %+v, want %+v", got, want)
	}

	if err := l.Proclaim(ctx, "10.0.0.2:80"); err != nil {
		t.Fatalf("Proclaim: %v", err)
	}
	want.Value = "10.0.0.2:80"
	if got := recv(t, obs, long, "the proclaimed value"); got != want {
		t.Fatalf("observed %+v, want %+v", got, want)
	}
	if got, err := e.Leader(ctx); err != nil || got != want {
		t.Fatalf("Leader = %+v, %v; want %+v", got, err, want)
	}
	ps, err := e.Participants(ctx)
	if err != nil || len(ps) != 1 || !ps[0].Acting || ps[0].Value != want.Value {
		t.Fatalf("Participants = %+v, %v", ps, err)
	}
	data, _, err := sess.Get(ctx, e.LeaderPath())
	if err != nil || !strings.Contains(string(data), `"value":"10.0.0.2:80"`) {
		t.Fatalf("leader node %s, %v", data, err)
	}

	// Bad values are refused and change nothing.
	if err := l.Proclaim(ctx, "\xff"); !errors.Is(err, election.ErrInvalidValue) {
		t.Errorf("Proclaim of bytes that are not UTF-8: %v, want ErrInvalidValue", err)
	}
	if err := l.Proclaim(ctx, strings.Repeat("x", sess.Config().MaxDataSize)); !errors.Is(err, zkcoord.ErrTooLarge) {
		t.Errorf("Proclaim of a value larger than a node: %v, want ErrTooLarge", err)
	}
	if got, err := e.Leader(ctx); err != nil || got != want {
		t.Fatalf("Leader after refused values = %+v, %v; want %+v", got, err, want)
	}

	// The empty value is none.
	if err := l.Proclaim(ctx, ""); err != nil {
		t.Fatal(err)
	}
	want.Value = ""
	if got := recv(t, obs, long, "the value cleared"); got != want {
		t.Fatalf("observed %+v, want %+v", got, want)
	}
	if data, _, err := sess.Get(ctx, e.LeaderPath()); err != nil || strings.Contains(string(data), "value") {
		t.Fatalf("leader node %s, %v", data, err)
	}

	// A resigned leader proclaims nothing.
	if err := l.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Proclaim(ctx, "late"); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Errorf("Proclaim after Resign: %v, want ErrNotOwner", err)
	}
	if ok, _, err := sess.Exists(ctx, e.LeaderPath()); err != nil || ok {
		t.Errorf("leader node after Resign: exists %v, %v", ok, err)
	}
}

// TestWithValueValidated: New refuses a value a leader node cannot hold.
func TestWithValueValidated(t *testing.T) {
	sess := connect(t, shared.Servers())
	path := uniquePath(t)
	if _, err := election.New(sess, path, election.WithValue("\xff")); !errors.Is(err, election.ErrInvalidValue) {
		t.Errorf("WithValue of bytes that are not UTF-8: %v, want ErrInvalidValue", err)
	}
	big := strings.Repeat("x", sess.Config().MaxDataSize-50)
	if _, err := election.New(sess, path, election.WithValue(big)); !errors.Is(err, zkcoord.ErrTooLarge) {
		t.Errorf("WithValue of %d bytes: %v, want ErrTooLarge", len(big), err)
	}
}

// TestProclaimFencedByTheServer: a leader that has not heard yet that it
// was deposed, or that its node was deleted, is refused by the server:
// its Proclaim fails with ErrNotOwner and the leader node keeps its value.
func TestProclaimFencedByTheServer(t *testing.T) {
	for _, c := range []struct {
		name   string
		depose func(ctx context.Context, admin *zkcoord.Session, e *election.Election, l *election.Leadership) error
	}{
		{"term bumped", func(ctx context.Context, admin *zkcoord.Session, e *election.Election, _ *election.Leadership) error {
			_, err := admin.Set(ctx, e.TermPath(), []byte(`{"id":"usurper","node":"/x"}`), -1)
			return err
		}},
		{"node deleted", func(ctx context.Context, admin *zkcoord.Session, _ *election.Election, l *election.Leadership) error {
			return admin.Delete(ctx, l.Node(), -1)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t, long)
			path := uniquePath(t)
			sess, admin := connect(t, shared.Servers()), connect(t, shared.Servers())
			// No re-check while the test runs: only the dropped
			// notification could tell the leader.
			e := newElection(t, sess, path, election.WithValue("mine"), election.WithRecheck(time.Hour))
			l, err := e.Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			election.DropNextNotificationForTest(e)
			if err := c.depose(ctx, admin, e, l); err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, long, "the leader's notification dropped", func() bool {
				return election.NotificationDroppedForTest(e)
			})
			before, _, err := admin.Get(ctx, e.LeaderPath())
			if err != nil {
				t.Fatal(err)
			}
			if closed(l.Done()) {
				t.Fatal("the leader learned of its end: the test proves nothing")
			}
			if err := l.Proclaim(ctx, "stale"); !errors.Is(err, zkcoord.ErrNotOwner) {
				t.Fatalf("Proclaim: %v, want ErrNotOwner", err)
			}
			after, _, err := admin.Get(ctx, e.LeaderPath())
			if err != nil || string(after) != string(before) {
				t.Fatalf("leader node %s (%v), was %s", after, err, before)
			}
			l.Resign(ctx)
		})
	}
}

// TestProclaimLostReply: the reply to a Proclaim is lost after the server
// applied it; Proclaim settles it by the leader node and reports success,
// having written once.
func TestProclaimLostReply(t *testing.T) {
	ctx := testCtx(t, 2*long)
	proxy := shared.NewProxy(t)
	sess := connect(t, proxy.Servers(), func(c *zkcoord.Config) { c.SessionTimeout = testkit.SessionTimeout })
	observer := connect(t, shared.Servers())
	testkit.UntilLost(t, func(delay time.Duration) bool {
		e := newElection(t, sess, fmt.Sprintf("%s-%v", uniquePath(t), delay))
		l, err := e.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Resign(ctx)
		unknown := make(chan struct{}, 1)
		states := sess.Watch(ctx)
		go func() {
			for sc := range states {
				if sc.State == zkcoord.Suspended {
					select {
					case unknown <- struct{}{}:
					default:
					}
				}
			}
		}()
		lost, err := testkit.LoseReply(t, ctx, proxy, observer, e.LeaderPath(), delay, unknown, func() error {
			return l.Proclaim(ctx, "after the cut")
		})
		if err != nil {
			t.Fatalf("Proclaim: %v", err)
		}
		got, err := e.Leader(ctx)
		if err != nil || got.Value != "after the cut" {
			t.Fatalf("Leader = %+v, %v", got, err)
		}
		if _, st, err := observer.Get(ctx, e.LeaderPath()); err != nil || st.Version != 1 {
			t.Fatalf("leader node at version %v (%v), want 1: one write", st, err)
		}
		if closed(l.Done()) {
			t.Fatalf("leadership ended: %v", l.Err())
		}
		return lost
	})
}
