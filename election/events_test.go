package election_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// of returns the events of the candidate whose node is node, in order.
func (r *recorder) of(node string) []election.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read()
	var out []election.Event
	for _, ev := range r.events {
		if ev.Node == node {
			out = append(out, ev)
		}
	}
	return out
}

// followed returns the FollowingID of every EventFollowing of node.
func (r *recorder) followed(node string) []string {
	var ids []string
	for _, ev := range r.of(node) {
		if ev.Type == election.EventFollowing {
			ids = append(ids, ev.FollowingID)
		}
	}
	return ids
}

// TestFollowingEventNamesPredecessor: a follower's EventFollowing names
// the candidate it watches, and a new one names the next predecessor when
// that one leaves.
func TestFollowingEventNamesPredecessor(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	rec := newRecorder()
	nominate := func(id string) *election.Candidate {
		t.Helper()
		c, err := newElection(t, sess, path, election.WithID(id), election.WithEvents(rec.ch)).Nominate(ctx)
		if err != nil {
			t.Fatalf("Nominate %s: %v", id, err)
		}
		return c
	}
	a, b, c := nominate("a"), nominate("b"), nominate("c")

	evs := rec.of(c.Node())
	last := evs[len(evs)-1]
	if last.Type != election.EventFollowing || last.Following != b.Node() || last.FollowingID != "b" || last.ID != "c" {
		t.Fatalf("c's last event %+v, want following b (%s)", last, b.Node())
	}
	if got := strings.Join(rec.followed(b.Node()), ","); got != "a" {
		t.Fatalf("b followed %s, want a", got)
	}

	if err := b.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, long, "c follows a", func() bool { return len(rec.followed(c.Node())) == 2 })
	if got := strings.Join(rec.followed(c.Node()), ","); got != "b,a" {
		t.Fatalf("c followed %s, want b then a", got)
	}
	evs = rec.of(c.Node())
	if last := evs[len(evs)-1]; last.Following != a.Node() {
		t.Fatalf("c's last event %+v, want following %s", last, a.Node())
	}
	if st := c.State(); st.Role != election.Following || st.FollowingID != "a" || st.Following != a.Node() {
		t.Fatalf("c's state %+v", st)
	}

	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c.Elected(), long, "c elected")
	if got := strings.Join(rec.followed(c.Node()), ","); got != "b,a" {
		t.Fatalf("c followed %s after it was elected", got)
	}
	c.Resign(ctx)
}

// checkEnding checks that a candidate's last events are lost (if it led)
// and then failed, both with cause want.
func checkEnding(t *testing.T, rec *recorder, c *election.Candidate, led bool, want ...error) {
	t.Helper()
	evs := rec.of(c.Node())
	types := make([]string, len(evs))
	for i, ev := range evs {
		types[i] = ev.Type.String()
	}
	tail := []election.EventType{election.EventFailed}
	if led {
		tail = []election.EventType{election.EventLost, election.EventFailed}
	}
	if len(evs) < len(tail) {
		t.Fatalf("%s: events %v", c.ID(), types)
	}
	for i, typ := range tail {
		ev := evs[len(evs)-len(tail)+i]
		if ev.Type != typ {
			t.Fatalf("%s: events %v, want them to end with %v", c.ID(), types, tail)
		}
		for _, w := range want {
			if !errors.Is(ev.Err, w) {
				t.Fatalf("%s: %v event with Err %v, want %v", c.ID(), ev.Type, ev.Err, w)
			}
		}
	}
}

// TestFailedEventOnSessionClose: closing the Session ends a leader with
// EventLost then EventFailed, and a follower with EventFailed.
func TestFailedEventOnSessionClose(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	rec := newRecorder()
	l, err := newElection(t, sess, path, election.WithID("l"), election.WithEvents(rec.ch)).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newElection(t, sess, path, election.WithID("f"), election.WithEvents(rec.ch)).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Events are emitted before Done closes.
	waitClosed(t, l.Candidate().Done(), long, "leader finished")
	waitClosed(t, f.Done(), long, "follower finished")
	checkEnding(t, rec, l.Candidate(), true, election.ErrLost, zkcoord.ErrSessionClosed)
	checkEnding(t, rec, f, false, election.ErrLost, zkcoord.ErrSessionClosed)
}

// TestFailedEventOnNodeDeleted: a leader whose node someone else deletes
// reports EventLost then EventFailed with ErrNodeDeleted, and removes the
// leader node it wrote, which its term still guards.
func TestFailedEventOnNodeDeleted(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	admin := connect(t, shared.Servers())
	rec := newRecorder()
	e := newElection(t, sess, path, election.WithEvents(rec.ch))
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, l.Node(), -1); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, l.Candidate().Done(), long, "leader finished")
	checkEnding(t, rec, l.Candidate(), true, election.ErrNodeDeleted)
	if ok, _, err := admin.Exists(ctx, e.LeaderPath()); err != nil || ok {
		t.Fatalf("leader node left behind (exists %v, %v)", ok, err)
	}
}

// TestFailureRightAfterTakingOffice: a candidate whose node is deleted
// just after it took office never leads, reports EventFailed, and does not
// leave its leader node behind for the rest of its session.
func TestFailureRightAfterTakingOffice(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	admin := connect(t, shared.Servers())
	rec := newRecorder()
	e := newElection(t, sess, path, election.WithEvents(rec.ch))
	var (
		mu     sync.Mutex
		hookAt string
		delErr error
	)
	election.SetAfterTakeOfficeForTest(e, func(node string) {
		err := admin.Delete(ctx, node, -1)
		mu.Lock()
		hookAt, delErr = node, err
		mu.Unlock()
	})
	// Nominate reports the failure, or returns the candidate as it
	// finishes.
	c, err := e.Nominate(ctx)
	if err == nil {
		waitClosed(t, c.Done(), long, "candidate finished")
		if c.Leadership() != nil {
			t.Fatalf("the candidate led")
		}
		err = c.Err()
	}
	if !errors.Is(err, election.ErrNodeDeleted) {
		t.Fatalf("Nominate: %v, want ErrNodeDeleted", err)
	}
	mu.Lock()
	node, derr := hookAt, delErr
	mu.Unlock()
	if node == "" || derr != nil {
		t.Fatalf("deleting the node after taking office: node %q, %v", node, derr)
	}
	// The candidate deleted what it could before it finished, and nobody
	// else writes the leader node here.
	if ok, _, err := admin.Exists(ctx, e.LeaderPath()); err != nil || ok {
		t.Fatalf("leader node left behind (exists %v, %v)", ok, err)
	}
	var types []string
	for _, ev := range rec.of(node) {
		types = append(types, ev.Type.String())
	}
	if got := strings.Join(types, ","); got != "offered,determine,failed" {
		t.Fatalf("events %s", got)
	}
	if _, err := e.Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader: %v, want ErrNoLeader", err)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// line returns the first logged line that contains every one of parts.
func (b *syncBuffer) line(parts ...string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
next:
	for _, l := range strings.Split(b.buf.String(), "\n") {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue next
			}
		}
		return l
	}
	return ""
}

// TestEventsAreLogged: transitions go to the Logger given with WithLogger.
func TestEventsAreLogged(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	buf := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := newElection(t, sess, path, election.WithID("a"), election.WithLogger(logger)).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newElection(t, sess, path, election.WithID("b"), election.WithLogger(logger)).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, b.Elected(), long, "b elected")
	if err := b.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]string{
		{"level=INFO", `msg="election elected"`, "id=a", "node=" + a.Node()},
		{"level=DEBUG", `msg="election following"`, "id=b", "following=" + a.Node(), "following_id=a"},
		{"level=DEBUG", `msg="election determine"`, "id=b", "notified=true"},
		{"level=INFO", `msg="election elected"`, "id=b", "token="},
		{"level=WARN", `msg="election lost"`, "id=b", "err="},
		{"level=INFO", `msg="election resigned"`, "id=b"},
	} {
		if buf.line(want...) == "" {
			t.Errorf("no log line with %q", want)
		}
	}
	if t.Failed() {
		buf.mu.Lock()
		t.Logf("log:\n%s", buf.buf.String())
		buf.mu.Unlock()
	}
}
