package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// turn is one leadership handed to a Lead function.
type turn struct {
	id      string
	session int64
	passwd  []byte
	l       *election.Leadership
	release chan struct{} // closing it makes the function return nil
}

// leadFunc reports each leadership on turns and holds it until released or
// lost.
func leadFunc(id string, sess *zkcoord.Session, turns chan<- turn) func(context.Context, *election.Leadership) error {
	return func(ctx context.Context, l *election.Leadership) error {
		tn := turn{id: id, session: sess.ID(), passwd: sess.Password(), l: l, release: make(chan struct{})}
		turns <- tn
		select {
		case <-tn.release:
		case <-ctx.Done():
		}
		return nil
	}
}

// TestLeadRequeues: two candidates run Lead; each gives its leadership up
// in turn, and the first leads again after the second: Lead campaigned
// again after its leadership ended.
func TestLeadRequeues(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	path := uniquePath(t)
	turns := make(chan turn)
	runCtx, stop := context.WithCancel(ctx)
	results := make(chan error, 2)
	for _, id := range []string{"a", "b"} {
		sess := connect(t, shared.Servers())
		e, err := election.New(sess, path, election.WithID(id))
		if err != nil {
			t.Fatal(err)
		}
		go func() { results <- e.Lead(runCtx, leadFunc(id, sess, turns)) }()
	}
	first := recv(t, turns, 30*time.Second, "first leadership")
	close(first.release)
	second := recv(t, turns, 30*time.Second, "second leadership")
	if second.id == first.id {
		t.Fatalf("%s led twice in a row with another candidate waiting", first.id)
	}
	close(second.release)
	third := recv(t, turns, 30*time.Second, "third leadership")
	if third.id != first.id || third.l.Token() <= second.l.Token() {
		t.Fatalf("third leadership %s token %d, want %s above %d", third.id, third.l.Token(), first.id, second.l.Token())
	}
	if !errors.Is(first.l.Err(), election.ErrResigned) {
		t.Fatalf("first leadership ended with %v, want ErrResigned", first.l.Err())
	}
	stop()
	for range 2 {
		if err := recv(t, results, 30*time.Second, "Lead's return"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Lead returned %v after its context ended, want context.Canceled", err)
		}
	}
}

// TestLeadAfterSessionExpiry: the leader's session is expired on the
// server. Its leadership ends, the other candidate leads, and the first,
// running Lead under zkcoord.Supervise, campaigns again on a new Session
// and leads once the second gives up.
func TestLeadAfterSessionExpiry(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	path := uniquePath(t)
	turns := make(chan turn)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	supervised := make(chan error, 1)
	go func() {
		cfg := zkcoord.Config{Servers: shared.Servers(), SessionTimeout: 6 * time.Second}
		supervised <- zkcoord.Supervise(runCtx, cfg, func(ctx context.Context, sess *zkcoord.Session) error {
			e, err := election.New(sess, path, election.WithID("a"))
			if err != nil {
				return err
			}
			return e.Lead(ctx, leadFunc("a", sess, turns))
		})
	}()
	a := recv(t, turns, 30*time.Second, "a's leadership")

	sb := connect(t, shared.Servers())
	eb, err := election.New(sb, path, election.WithID("b"))
	if err != nil {
		t.Fatal(err)
	}
	bDone := make(chan error, 1)
	go func() { bDone <- eb.Lead(runCtx, leadFunc("b", sb, turns)) }()
	testkit.Eventually(t, long, "b standing by", func() bool {
		ps, err := eb.Participants(ctx)
		return err == nil && len(ps) == 2
	})

	if err := shared.ExpireSession(ctx, a.session, a.passwd); err != nil {
		t.Fatal(err)
	}
	b := recv(t, turns, 30*time.Second, "b's leadership")
	if b.id != "b" {
		t.Fatalf("after a's session expired, %s leads, want b", b.id)
	}
	waitClosed(t, a.l.Done(), 30*time.Second, "a's leadership to end")
	testkit.Eventually(t, long, "a standing by on a new session", func() bool {
		ps, err := eb.Participants(ctx)
		return err == nil && len(ps) == 2 && ps[1].ID == "a" && ps[1].Session != a.session
	})
	close(b.release)
	again := recv(t, turns, 30*time.Second, "a's second leadership")
	if again.id != "a" || again.session == a.session || again.l.Token() <= b.l.Token() {
		t.Fatalf("after b resigned: %s on session %#x token %d; want a on a new session (not %#x), token above %d",
			again.id, again.session, again.l.Token(), a.session, b.l.Token())
	}
	stop()
	if err := recv(t, supervised, 30*time.Second, "Supervise's return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Supervise returned %v, want context.Canceled", err)
	}
	if err := recv(t, bDone, 30*time.Second, "b's Lead"); !errors.Is(err, context.Canceled) {
		t.Fatalf("b's Lead returned %v, want context.Canceled", err)
	}
}
