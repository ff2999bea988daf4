package zkconn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/zktest"
)

func TestSessionMovesToAnotherServerWithItsWatches(t *testing.T) {
	cluster := zktest.Start(t, zktest.WithServers(3))
	proxy := cluster.NewProxy(t)
	c := dial(t, proxy.Servers(), 20*time.Second)
	other := dial(t, cluster.Servers(), 20*time.Second)
	ctx := testCtx(t, 60*time.Second)
	id := c.SessionID()
	for _, p := range []string{"/moved", "/gone"} {
		if _, _, err := other.Create(ctx, p, nil, openACL, wire.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	_, _, dw, err := c.GetData(ctx, "/moved", true)
	if err != nil {
		t.Fatal(err)
	}
	_, _, xw, err := c.Exists(ctx, "/gone", true)
	if err != nil {
		t.Fatal(err)
	}
	_, _, ew, err := c.Exists(ctx, "/born", true)
	if !errors.Is(err, wire.ErrNoNode) {
		t.Fatal(err)
	}
	_, pw, err := c.AddWatch(ctx, "/moved", wire.AddWatchPersistent)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := c.Connected()
	server := slices.Index(proxy.Servers(), addr)

	// Cut the client off, change the watched nodes, kill its server.
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Watch{dw, xw, ew, pw} {
		if e := next(t, w); e.Type != wire.EventNone || e.State != wire.StateDisconnected {
			t.Fatalf("watch on %s: %+v; want Disconnected", w.Path(), e)
		}
	}
	if _, _, err := other.SetData(ctx, "/moved", []byte("changed"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Delete(ctx, "/gone", -1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Create(ctx, "/born", nil, openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Server(server).Kill(); err != nil {
		t.Fatal(err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}

	// The session re-attaches elsewhere; setWatches with the last zxid
	// seen fires every watch whose node changed meanwhile.
	want := map[*Watch]wire.EventType{dw: wire.EventNodeDataChanged, xw: wire.EventNodeDeleted,
		ew: wire.EventNodeCreated, pw: wire.EventNodeDataChanged}
	for w, typ := range want {
		if e := nextNode(t, w); e.Type != typ || e.Path != w.Path() {
			t.Errorf("watch on %s: %+v; want %v", w.Path(), e, typ)
		}
	}
	now, _ := c.Connected()
	if now == addr || c.SessionID() != id {
		t.Fatalf("after the kill: server %s (was %s), session 0x%x (was 0x%x)", now, addr, c.SessionID(), id)
	}
	// The persistent watch is still armed on the new server.
	if _, _, err := other.SetData(ctx, "/moved", []byte("again"), -1); err != nil {
		t.Fatal(err)
	}
	if e := nextNode(t, pw); e.Type != wire.EventNodeDataChanged {
		t.Fatalf("persistent watch after the move: %+v", e)
	}
}

func TestExpiryEndsTheClient(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 10*time.Second)
	ctx := testCtx(t, 30*time.Second)
	id := c.SessionID()
	_, _, w, err := c.Exists(ctx, "/x", true)
	if !errors.Is(err, wire.ErrNoNode) {
		t.Fatal(err)
	}
	if err := cluster.ExpireSession(ctx, id, c.Password()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the client did not end after its session expired")
	}
	if !errors.Is(c.Err(), wire.ErrSessionExpired) {
		t.Fatalf("Err %v; want SessionExpired", c.Err())
	}
	for {
		e := next(t, w)
		if e.State == wire.StateExpired {
			break
		}
		if e.State != wire.StateDisconnected {
			t.Fatalf("watch got %+v before Expired", e)
		}
	}
	waitState(t, c, wire.StateExpired)
	// No new session: calls fail, unsent, with the expiry.
	_, _, _, err = c.Exists(ctx, "/", false)
	if !errors.Is(err, ErrNotSent) || !errors.Is(err, wire.ErrSessionExpired) {
		t.Fatalf("a call after expiry: %v", err)
	}
	if c.SessionID() != id {
		t.Fatalf("session 0x%x became 0x%x", id, c.SessionID())
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close after expiry: %v", err)
	}
}

func TestCloseEndsTheSession(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 30*time.Second)
	other := dial(t, cluster.Servers(), 30*time.Second)
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := c.Create(ctx, "/mine", nil, openACL, wire.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	_, w, err := other.AddWatch(ctx, "/mine", wire.AddWatchPersistent)
	if err != nil {
		t.Fatal(err)
	}
	_, _, own, err := c.Exists(ctx, "/never", true)
	if !errors.Is(err, wire.ErrNoNode) {
		t.Fatal(err)
	}
	// Requests issued before Close are written before closeSession.
	last := c.Start(ctx, wire.OpSetData, &wire.SetDataRequest{Path: "/mine", Data: []byte("bye"), Version: -1}, nil)
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := last.Wait(); err != nil {
		t.Fatalf("a request issued before Close: %v", err)
	}
	// The ephemeral node went with the session, at once, not at expiry.
	if e := nextNode(t, w); e.Type != wire.EventNodeDataChanged {
		t.Fatalf("other's watch: %+v; want first the NodeDataChanged of the last request", e)
	}
	if e := nextNode(t, w); e.Type != wire.EventNodeDeleted {
		t.Fatalf("other's watch: %+v; want NodeDeleted", e)
	}
	// Every watch still armed gets a last Closed event.
	for {
		e := next(t, own)
		if e.State == wire.StateClosed {
			break
		}
	}
	waitState(t, c, wire.StateClosed)
	if _, _, _, err := c.Exists(ctx, "/", false); !errors.Is(err, ErrClosed) || !errors.Is(err, ErrNotSent) {
		t.Fatalf("a call after Close: %v", err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestAuthIsSentAgainOnReattach(t *testing.T) {
	cluster := zktest.Start(t)
	proxy := cluster.NewProxy(t)
	ctx := testCtx(t, 30*time.Second)
	c, err := Dial(ctx, Config{Servers: proxy.Servers(), SessionTimeout: 10 * time.Second,
		Auth: []wire.AuthPacket{{Scheme: "digest", Auth: []byte("alice:secret")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	acl := []wire.ACL{{Perms: wire.PermAll, ID: wire.ID{Scheme: "auth"}}}
	if _, _, err := c.Create(ctx, "/private", []byte("s"), acl, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if err := proxy.ResetPeer(); err != nil {
		t.Fatal(err)
	}
	c.Start(ctx, wire.OpSync, &wire.SyncRequest{Path: "/"}, nil) // data on the link: the reset
	waitState(t, c, wire.StateDisconnected)
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateSyncConnected)
	if _, _, _, err := c.GetData(ctx, "/private", false); err != nil {
		t.Fatalf("reading a node of our own identity after re-attaching: %v", err)
	}
	stranger := dial(t, cluster.Servers(), 10*time.Second)
	if _, _, _, err := stranger.GetData(ctx, "/private", false); !errors.Is(err, wire.ErrNoAuth) {
		t.Fatalf("a client without the identity read it: %v", err)
	}
}

func TestManyWatchesAreReArmedInBatches(t *testing.T) {
	cluster := zktest.Start(t)
	proxy := cluster.NewProxy(t)
	c := dial(t, proxy.Servers(), 20*time.Second)
	other := dial(t, cluster.Servers(), 20*time.Second)
	ctx := testCtx(t, 60*time.Second)
	// 300 exist watches on paths of 1,000 characters: about 300 KB of
	// paths, more than two of ClientCnxn's 128 KB batches.
	const n = 300
	path := func(i int) string { return fmt.Sprintf("/w%04d-%s", i, strings.Repeat("x", 994)) }
	watches := make([]*Watch, n)
	for i := range watches {
		_, _, w, err := c.Exists(ctx, path(i), true)
		if !errors.Is(err, wire.ErrNoNode) || w == nil {
			t.Fatalf("exists %d: %v", i, err)
		}
		watches[i] = w
	}
	if batches := len(c.watches.rearm(0)); batches < 3 {
		t.Fatalf("%d setWatches batches for %d KB of paths", batches, n)
	}
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateDisconnected)
	fired := []int{0, n / 2, n - 1}
	for _, i := range fired {
		if _, _, err := other.Create(ctx, path(i), nil, openACL, wire.ModePersistent); err != nil {
			t.Fatal(err)
		}
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	for _, i := range fired {
		if e := nextNode(t, watches[i]); e.Type != wire.EventNodeCreated || e.Path != path(i) {
			t.Fatalf("watch %d after re-attach: %+v", i, e)
		}
	}
	// The others were armed again too.
	for _, i := range []int{1, n/2 + 1, n - 2} {
		if _, err := c.CheckWatches(ctx, path(i), wire.WatcherData); err != nil {
			t.Fatalf("watch %d not re-armed: %v", i, err)
		}
	}
}

func TestTooLargeRequestIsNotSent(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 10*time.Second)
	ctx := testCtx(t, 30*time.Second)
	_, _, err := c.Create(ctx, "/big", make([]byte, wire.MaxBuffer), openACL, wire.ModePersistent)
	if !errors.Is(err, ErrNotSent) || !errors.Is(err, wire.ErrFrameTooLarge) {
		t.Fatalf("a create larger than jute.maxbuffer: %v; want not sent, frame too large", err)
	}
	if _, _, _, err := c.Exists(ctx, "/big", false); !errors.Is(err, wire.ErrNoNode) {
		t.Fatalf("after the refused request the connection answers %v", err)
	}
}
