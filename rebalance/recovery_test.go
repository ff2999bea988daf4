package rebalance_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/zktest"
)

// recoveryLog collects the recovery events of a client.
type recoveryLog struct {
	mu     sync.Mutex
	ch     chan zkcoord.RecoveryEvent // the events not yet read into events
	events []zkcoord.RecoveryEvent
}

func newRecoveryLog() *recoveryLog {
	return &recoveryLog{ch: make(chan zkcoord.RecoveryEvent, 1024)}
}

func (l *recoveryLog) snapshot() []zkcoord.RecoveryEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.ch) > 0 {
		l.events = append(l.events, <-l.ch)
	}
	return slices.Clone(l.events)
}

// find returns the first event of kind k after the first i events.
func (l *recoveryLog) find(k zkcoord.RecoveryKind, i int) (zkcoord.RecoveryEvent, int, bool) {
	events := l.snapshot()
	for j := i; j < len(events); j++ {
		if events[j].Kind == k {
			return events[j], j, true
		}
	}
	return zkcoord.RecoveryEvent{}, 0, false
}

// startRecovering starts an auto-recovering client whose sessions rec
// records and whose recovery events land in the returned log.
func startRecovering(t *testing.T, ctx context.Context, servers []string, rec *zktest.SessionRecorder, root, group string, h rebalance.Handler) (*rebalance.Client, *recoveryLog) {
	t.Helper()
	cfg := config(servers)
	cfg.Dialer = rec.Dial
	log := newRecoveryLog()
	c, err := rebalance.StartConfig(ctx, cfg, zkcoord.Join(root, group), h, rebalance.WithMinInterval(0),
		rebalance.WithAutoRecovery(true), rebalance.WithMaxRecoveryBackoff(time.Second), rebalance.WithRecoveryEvents(log.ch))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Stop(sctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return c, log
}

// checkRecoveredAfter checks that the client joined again as a new client
// on a new session, that its events told it (the ended session's, then the
// new one's), and that every resource it runs now has a new token.
func checkRecoveredAfter(t *testing.T, log *recoveryLog, c *rebalance.Client, oldID string, oldSession int64, before []rebalance.Assignment) {
	t.Helper()
	if c.ID() == oldID {
		t.Fatalf("still client %s", oldID)
	}
	ended, i, ok := log.find(zkcoord.SessionEnded, 0)
	if !ok || ended.Session != oldSession || ended.Err == nil {
		t.Fatalf("events %+v: want the end of session 0x%x with its cause", log.snapshot(), oldSession)
	}
	recovered, _, ok := log.find(zkcoord.Recovered, i)
	if !ok || recovered.Session == 0 || recovered.Session == oldSession {
		t.Fatalf("events %+v: want a recovery on a new session after the end of 0x%x", log.snapshot(), oldSession)
	}
	tokens := map[string]int64{}
	for _, a := range before {
		tokens[a.Resource] = a.Token
	}
	for _, a := range c.Assignments() {
		if a.Client != c.ID() || a.Token <= tokens[a.Resource] {
			t.Errorf("assignment %+v after recovery; want client %s and a token above %d", a, c.ID(), tokens[a.Resource])
		}
	}
}

// TestAutoRecoveryEventsAfterExpiry: the server expires the client's
// session; the client's recovery, run by zkcoord.Supervise, reports the
// end of that session and the recovery on a new one, and the client runs
// every resource again as a new client, with new tokens.
func TestAutoRecoveryEventsAfterExpiry(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(3)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	ctx := testCtx(t, 120*time.Second)
	sessions := zktest.NewSessionRecorder(nil)
	a, log := startRecovering(t, ctx, cluster.Servers(), sessions, root, group, rec.handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs everything", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources) })
	started, _, ok := log.find(zkcoord.SessionStarted, 0)
	id, passwd := sessions.Session()
	if !ok || started.Session != id {
		t.Fatalf("events %+v; want the start of session 0x%x first", log.snapshot(), id)
	}
	oldID, before := a.ID(), a.Assignments()

	if err := cluster.ExpireSession(ctx, id, passwd); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 60*time.Second, "a rejoined", func() error {
		if a.ID() == oldID {
			return fmt.Errorf("still %s", oldID)
		}
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources)
	})
	checkRecoveredAfter(t, log, a, oldID, id, before)
	if ended, _, _ := log.find(zkcoord.SessionEnded, 0); !errors.Is(ended.Err, zkcoord.ErrSessionExpired) {
		t.Errorf("session ended with %v, want ErrSessionExpired", ended.Err)
	}
	rec.check(t)
}

// TestAutoRecoveryEventsAfterServerKill: the only server is killed; while
// it is down the client's attempts to connect fail and are reported as
// recovering; once it is back the client recovers on a new session.
func TestAutoRecoveryEventsAfterServerKill(t *testing.T) {
	c := zktest.Start(t)
	root, group := newRoot(t), "g"
	op := connect(t, c.Servers()...)
	resources := resourceIDs(2)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	ctx := testCtx(t, 180*time.Second)
	sessions := zktest.NewSessionRecorder(nil)
	a, log := startRecovering(t, ctx, c.Servers(), sessions, root, group, rec.handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs everything", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources) })
	id, _ := sessions.Session()
	oldID, before := a.ID(), a.Assignments()

	if err := c.Server(0).Kill(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 90*time.Second, "a failed attempt to recover", func() error {
		if _, _, ok := log.find(zkcoord.Recovering, 0); !ok {
			return fmt.Errorf("events %+v", log.snapshot())
		}
		return nil
	})
	if n := len(a.Assignments()); n != 0 {
		t.Fatalf("a still runs %d resources without a session", n)
	}
	if err := c.Server(0).Start(); err != nil {
		t.Fatal(err)
	}
	after := connect(t, c.Servers()...)
	testkit.WaitFor(t, 90*time.Second, "a rejoined", func() error {
		if a.ID() == oldID {
			return fmt.Errorf("still %s", oldID)
		}
		return balanced(ctx, after, root, group, []*rebalance.Client{a}, resources)
	})
	checkRecoveredAfter(t, log, a, oldID, id, before)
	rec.check(t)
}

// Recovery events are only for clients that open their own Sessions.
func TestRecoveryEventsNeedStartConfig(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	_, err := rebalance.Start(ctx, connect(t), "/g", rebalance.Handler{}, rebalance.WithRecoveryEvents(make(chan zkcoord.RecoveryEvent)))
	if !errors.Is(err, rebalance.ErrInvalidOption) {
		t.Fatalf("Start with recovery events = %v, want ErrInvalidOption", err)
	}
}
