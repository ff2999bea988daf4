package zkcoord_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// A blackhole shorter than the session timeout suspends the Session, which
// then reconnects on the same ZooKeeper session.
func TestBlackholeShorterThanTimeoutReconnects(t *testing.T) {
	c := zktest.Start(t)
	p := c.NewProxy(t)
	s := connect(t, zkcoord.Config{Servers: p.Servers(), SessionTimeout: 6 * time.Second, LostAfter: 0.8})
	ctx := testCtx(t, 60*time.Second)
	if _, err := s.Create(ctx, "/mine", nil, zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	_, st, err := s.Exists(ctx, "/mine")
	if err != nil {
		t.Fatal(err)
	}
	id := st.EphemeralOwner // the session as the server knows it
	if id == 0 || id != s.ID() {
		t.Fatalf("ephemeral owner %#x, Session.ID %#x", id, s.ID())
	}
	w := s.Watch(ctx)
	if st := nextState(t, w, time.Second).State; st != zkcoord.Connected {
		t.Fatalf("first state %v, want Connected", st)
	}
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if st := nextState(t, w, 10*time.Second).State; st != zkcoord.Suspended {
		t.Fatalf("state %v, want Suspended", st)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if ch := nextState(t, w, 10*time.Second); ch.State != zkcoord.Reconnected {
		t.Fatalf("state %v (%v), want Reconnected", ch.State, ch.Err)
	}
	if ok, _, err := s.Exists(ctx, "/mine"); err != nil || !ok {
		t.Fatalf("ephemeral node after reconnect: %v %v", ok, err)
	}
	// The server still runs our requests on the original session.
	if _, err := s.Create(ctx, "/after", nil, zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	ok, st, err := s.Exists(ctx, "/after")
	if err != nil || !ok {
		t.Fatalf("node created after reconnect: exists=%v, err=%v", ok, err)
	}
	if st.EphemeralOwner != id {
		t.Fatalf("node created after reconnect is owned by session %#x, want %#x", st.EphemeralOwner, id)
	}
}

// A reconnect whose handshake is slow is given time to complete. With one
// server go-zookeeper waits a second before it dials again, so a fresh
// connection closed before its handshake is answered would cost the session
// the rest of its time.
func TestSlowHandshakeAfterSuspendReconnects(t *testing.T) {
	c := zktest.Start(t)
	p := c.NewProxy(t)
	// Suspended after 3s of silence, Lost after 5.4s; a connection without
	// a reply for 0.6s is dropped.
	s := connect(t, zkcoord.Config{Servers: p.Servers(), SessionTimeout: 6 * time.Second, LostAfter: 0.9})
	ctx := testCtx(t, 60*time.Second)
	w := s.Watch(ctx)
	if st := nextState(t, w, time.Second).State; st != zkcoord.Connected {
		t.Fatalf("first state %v, want Connected", st)
	}
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if st := nextState(t, w, 10*time.Second).State; st != zkcoord.Suspended {
		t.Fatalf("state %v, want Suspended", st)
	}
	// The Session has dropped the silent connection; go-zookeeper dials
	// again a second later, and the handshake then takes over 0.3s.
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := p.Delay(150 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ch := nextState(t, w, 10*time.Second); ch.State != zkcoord.Reconnected {
		t.Fatalf("state %v (%v), want Reconnected", ch.State, ch.Err)
	}
	if _, _, err := s.Exists(ctx, "/"); err != nil {
		t.Fatal(err)
	}
}

// A blackhole longer than the session timeout makes the Session declare
// itself Lost, strictly before the server deletes its ephemeral node.
func TestLostBeforeServerExpiry(t *testing.T) {
	c := zktest.Start(t)
	p := c.NewProxy(t)
	const timeout = 4 * time.Second
	victim := connect(t, zkcoord.Config{Servers: p.Servers(), SessionTimeout: timeout})
	observer := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 60*time.Second)
	if victim.Timeout() != timeout {
		t.Fatalf("negotiated timeout %v, want %v", victim.Timeout(), timeout)
	}
	if _, err := victim.Create(ctx, "/owned", nil, zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	ok, _, gone, err := observer.ExistsW(ctx, "/owned")
	if err != nil || !ok {
		t.Fatalf("observer ExistsW: %v %v", ok, err)
	}
	w := victim.Watch(ctx)
	nextState(t, w, time.Second)                            // Connected
	if _, _, err := victim.Get(ctx, "/owned"); err != nil { // a fresh response
		t.Fatal(err)
	}
	lastResponse := time.Now()
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}

	select {
	case <-victim.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the partitioned Session never ended")
	}
	// The Session has declared itself lost. The server must still hold the
	// session: its ephemeral node is still there.
	if ok, _, err := observer.Exists(ctx, "/owned"); err != nil || !ok {
		t.Fatalf("when the Session reported Lost, the server had already deleted its ephemeral node "+
			"(exists=%v, err=%v)", ok, err)
	}
	if !errors.Is(victim.Err(), zkcoord.ErrSessionLost) {
		t.Fatalf("Err = %v, want ErrSessionLost", victim.Err())
	}
	var lost zkcoord.StateChange
	for ch := range w {
		lost = ch
	}
	if lost.State != zkcoord.Lost {
		t.Fatalf("last state %v, want Lost", lost.State)
	}
	if min := victim.LostAfter(); lost.At.Sub(lastResponse) < min-50*time.Millisecond {
		t.Fatalf("Lost %v after the last response, before the %v threshold", lost.At.Sub(lastResponse), min)
	}
	// Only then does the server expire the partitioned session.
	select {
	case ev := <-gone:
		if ev.Type != zkcoord.EventNodeDeleted {
			t.Fatalf("observer event %+v", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server never expired the partitioned session")
	}
	if _, _, err := victim.Get(ctx, "/owned"); !errors.Is(err, zkcoord.ErrSessionLost) {
		t.Fatalf("Get on a lost Session = %v, want ErrSessionLost", err)
	}
}

// A server-side expiry ends the Session, and no new ZooKeeper session is
// opened behind the caller's back.
func TestForcedExpiry(t *testing.T) {
	// With several servers go-zookeeper redials the next one at once.
	c := zktest.Start(t, zktest.WithServers(3))
	d := newFaultyDialer()
	s := connect(t, zkcoord.Config{Servers: c.Servers(), Dialer: d.Dial})
	ctx := testCtx(t, 60*time.Second)
	w := s.Watch(ctx)
	nextState(t, w, time.Second) // Connected
	if err := c.ExpireSession(ctx, s.ID(), s.Password()); err != nil {
		t.Fatal(err)
	}
	var last zkcoord.StateChange
	for ch := range w {
		last = ch
	}
	if last.State != zkcoord.Expired || !errors.Is(s.Err(), zkcoord.ErrSessionExpired) {
		t.Fatalf("last state %v, Err %v; want Expired", last.State, s.Err())
	}
	// The server said the session is gone: whatever the Session owned must
	// already be stopped, so its deadline is in the past (the connect
	// response that reported the expiry renews nothing).
	if dl := s.ExpiryDeadline(); !dl.Before(time.Now()) {
		t.Fatalf("ExpiryDeadline %v after the server reported expiry, %v from now", dl, time.Until(dl))
	}
	if _, err := s.Create(ctx, "/after", nil, 0); !errors.Is(err, zkcoord.ErrSessionExpired) {
		t.Fatalf("Create after expiry = %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// go-zookeeper alone would redial at once for a new session.
	if !d.expired.Load() || d.lateDials.Load() != 0 {
		t.Fatalf("expired seen %v, dials after expiry %d: want no dial after expiry", d.expired.Load(), d.lateDials.Load())
	}
	// Close waited for every goroutine; nothing may be connected now.
	// (cons lists the four-letter-word connection itself, with no session.)
	testkit.Eventually(t, 10*time.Second, "no client sessions", func() bool {
		for i := range c.Len() {
			out, err := c.Server(i).Cons(ctx)
			if err != nil || strings.Contains(out, "sid=") {
				return false
			}
		}
		return true
	})
}

// Killing the server a Session uses moves it to another server of the
// ensemble, on the same ZooKeeper session.
func TestEnsembleServerKilled(t *testing.T) {
	c := zktest.Start(t, zktest.WithServers(3))
	s := connect(t, zkcoord.Config{Servers: c.Servers(), SessionTimeout: 8 * time.Second})
	ctx := testCtx(t, 90*time.Second)
	if _, err := s.Create(ctx, "/survivor", nil, zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	w := s.Watch(ctx)
	nextState(t, w, time.Second)
	id, before := s.ID(), s.Server()
	i := slices.Index(c.Servers(), before)
	if i < 0 {
		t.Fatalf("session on unknown server %q", before)
	}
	if err := c.Server(i).Kill(); err != nil {
		t.Fatal(err)
	}
	if st := nextState(t, w, 20*time.Second).State; st != zkcoord.Suspended {
		t.Fatalf("state %v, want Suspended", st)
	}
	if ch := nextState(t, w, 30*time.Second); ch.State != zkcoord.Reconnected {
		t.Fatalf("state %v (%v), want Reconnected", ch.State, ch.Err)
	}
	if s.ID() != id || s.Server() == before {
		t.Fatalf("after failover: id %x (was %x), server %s (was %s)", s.ID(), id, s.Server(), before)
	}
	if ok, _, err := s.Exists(ctx, "/survivor"); err != nil || !ok {
		t.Fatalf("ephemeral node after failover: %v %v", ok, err)
	}
}

// When the reply to a protected create is lost with its connection, the
// create finds its node again: exactly one node, none orphaned.
func TestProtectedCreateAcrossDroppedReply(t *testing.T) {
	c := zktest.Start(t)
	d := newFaultyDialer()
	s := connect(t, zkcoord.Config{Servers: c.Servers(), Dialer: d.Dial})
	ctx := testCtx(t, 60*time.Second)
	if err := s.EnsurePath(ctx, "/p"); err != nil {
		t.Fatal(err)
	}
	d.dropReply.Store(true)
	path, err := s.CreateProtected(ctx, "/p", "lock-", []byte("x"), zkcoord.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.dropped:
	default:
		t.Fatal("no reply was dropped: the test did not exercise the fault")
	}
	kids, _, err := s.Children(ctx, "/p")
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || "/p/"+kids[0] != path {
		t.Fatalf("children %v, want exactly the returned node %s", kids, path)
	}
	if !zkcoord.IsProtected(kids[0]) || zkcoord.StripProtected(kids[0])[:5] != "lock-" {
		t.Fatalf("node name %q lacks the protected form", kids[0])
	}
}

// A protected create whose caller gave up while its outcome was unknown
// leaves no node behind.
func TestProtectedCreateAbandonedLeavesNoOrphan(t *testing.T) {
	c := zktest.Start(t)
	d := newFaultyDialer()
	s := connect(t, zkcoord.Config{Servers: c.Servers(), Dialer: d.Dial, SessionTimeout: 10 * time.Second})
	observer := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 60*time.Second)
	if err := s.EnsurePath(ctx, "/q"); err != nil {
		t.Fatal(err)
	}
	d.refuse.Store(true) // once the connection drops, no reconnect for now
	d.dropReply.Store(true)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := s.CreateProtected(cctx, "/q", "n-", nil, zkcoord.FlagEphemeralSequential)
		done <- err
	}()
	<-d.dropped
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("CreateProtected = %v, want context.Canceled", err)
	}
	// The server did create the node; the caller does not know its name.
	if kids, _, err := observer.Children(ctx, "/q"); err != nil || len(kids) != 1 {
		t.Fatalf("children while disconnected: %v %v", kids, err)
	}
	d.refuse.Store(false)
	testkit.Eventually(t, 20*time.Second, "the abandoned node to be deleted", func() bool {
		kids, _, err := observer.Children(ctx, "/q")
		return err == nil && len(kids) == 0
	})
	if s.Err() != nil {
		t.Fatalf("session ended: %v", s.Err())
	}
}

// Close ends the ZooKeeper session at once: its ephemeral nodes go.
func TestCloseDeletesEphemerals(t *testing.T) {
	c := zktest.Start(t)
	observer := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 30*time.Second)
	s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: c.Servers(), SessionTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Create(ctx, "/e"+strconv.Itoa(i), nil, zkcoord.FlagEphemeral); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(s.Err(), zkcoord.ErrSessionClosed) {
		t.Fatalf("Err after Close = %v", s.Err())
	}
	for i := range 3 {
		if ok, _, err := observer.Exists(ctx, "/e"+strconv.Itoa(i)); err != nil || ok {
			t.Fatalf("ephemeral /e%d after Close: exists=%v err=%v", i, ok, err)
		}
	}
}
