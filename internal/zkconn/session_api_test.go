package zkconn

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/wait"
	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/zktest"
)

// Abandon ends the client without closeSession: the server keeps the
// session, and its ephemeral node, until it expires it.
func TestAbandonLeavesTheSessionToExpire(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 4*time.Second)
	other := dial(t, cluster.Servers(), 30*time.Second)
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := c.Create(ctx, "/eph", nil, openACL, wire.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	_, _, own, err := c.Exists(ctx, "/eph", true)
	if err != nil {
		t.Fatal(err)
	}
	_, _, w, err := other.Exists(ctx, "/eph", true)
	if err != nil {
		t.Fatal(err)
	}
	abandoned := time.Now()
	c.Abandon()
	for e := next(t, own); e.State != wire.StateClosed; e = next(t, own) {
	}
	if _, _, _, err := c.Exists(ctx, "/", false); !errors.Is(err, ErrClosed) || !errors.Is(err, ErrNotSent) {
		t.Fatalf("a call after Abandon: %v", err)
	}
	if e := nextNode(t, w); e.Type != wire.EventNodeDeleted {
		t.Fatalf("other's watch: %+v; want NodeDeleted", e)
	}
	// Deleted at expiry, not at once: closeSession would have taken a
	// round trip, expiry takes about the session timeout.
	if d := time.Since(abandoned); d < 2*time.Second {
		t.Fatalf("the ephemeral node went %v after Abandon; a closeSession was sent", d)
	}
}

// Reconnect drops a connection that has been quiet for the given time and
// leaves a younger or livelier one alone.
func TestReconnectDropsOnlyAQuietConnection(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 30*time.Second)
	ctx := testCtx(t, 30*time.Second)
	if c.Reconnect(time.Hour) {
		t.Fatal("Reconnect dropped a connection that answered just now")
	}
	if _, _, _, err := c.Exists(ctx, "/", false); err != nil {
		t.Fatal(err)
	}
	if !c.Reconnect(0) {
		t.Fatal("Reconnect(0) dropped nothing")
	}
	waitState(t, c, wire.StateDisconnected)
	waitState(t, c, wire.StateSyncConnected)
	if _, _, _, err := c.Exists(ctx, "/", false); err != nil {
		t.Fatalf("after Reconnect: %v", err)
	}
}

// A watch handed to Notify passes on what was queued before, then every
// later event in order; Next then finds nothing.
func TestNotifyHandsOverEveryEvent(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 30*time.Second)
	ctx := testCtx(t, 30*time.Second)
	_, w, err := c.AddWatch(ctx, "/n", wire.AddWatchPersistent)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Create(ctx, "/n", nil, openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	// The create's reply comes after its event: the event is queued.
	got := make(chan Event, 16)
	w.Notify(func(e Event) { got <- e })
	if e := <-got; e.Type != wire.EventNodeCreated {
		t.Fatalf("first event %+v, want NodeCreated", e)
	}
	if _, _, err := c.SetData(ctx, "/n", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if e := <-got; e.Type != wire.EventNodeDataChanged {
		t.Fatalf("second event %+v, want NodeDataChanged", e)
	}
	c.Reconnect(0)
	if e := <-got; e.State != wire.StateDisconnected {
		t.Fatalf("after a dropped connection: %+v, want Disconnected", e)
	}
	if e := <-got; e.State != wire.StateSyncConnected {
		t.Fatalf("after a dropped connection: %+v, want SyncConnected", e)
	}
	if _, ok := w.TryNext(); ok {
		t.Fatal("TryNext found an event Notify should have had")
	}
}

// PingEvery sets how long the connection stays quiet before it pings.
func TestPingEverySetsTheHeartbeat(t *testing.T) {
	cluster := zktest.Start(t)
	c, err := Dial(testCtx(t, 30*time.Second), Config{Servers: cluster.Servers(), SessionTimeout: 30 * time.Second,
		PingEvery: func(time.Duration) time.Duration { return 50 * time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	// With the default (a third of 20 s) nothing would renew the session
	// for 6 s; with 50 ms the renewal keeps up with the clock.
	first := c.LastRenewal()
	wait.For(t, 10*time.Second, "pings renewing the session", func() error {
		if d := c.LastRenewal().Sub(first); d < 500*time.Millisecond {
			return fmt.Errorf("renewed %v later than at first", d)
		}
		return nil
	})
}

// A reply larger than the client accepts fails its own request with
// wire.ErrFrameTooLarge; the connection, and the requests after it, carry
// on.
func TestTooLargeReplyFailsOnlyItsRequest(t *testing.T) {
	cluster := zktest.Start(t)
	writer := dial(t, cluster.Servers(), 30*time.Second)
	c, err := Dial(testCtx(t, 30*time.Second), Config{Servers: cluster.Servers(), SessionTimeout: 30 * time.Second, MaxReply: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := writer.Create(ctx, "/big", make([]byte, 4096), openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if _, _, err := writer.Create(ctx, "/small", []byte("s"), openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	big := c.Start(ctx, wire.OpGetData, &wire.GetDataRequest{Path: "/big"}, &wire.GetDataResponse{})
	var small wire.GetDataResponse
	after := c.Start(ctx, wire.OpGetData, &wire.GetDataRequest{Path: "/small"}, &small)
	if _, err := big.Wait(); !errors.Is(err, wire.ErrFrameTooLarge) || errors.Is(err, wire.ErrConnectionLoss) {
		t.Fatalf("reading 4 KiB with a 1 KiB limit: %v; want ErrFrameTooLarge alone", err)
	}
	if _, err := after.Wait(); err != nil || string(small.Data) != "s" {
		t.Fatalf("the read behind it: %q, %v", small.Data, err)
	}
	for e, ok := c.Session().TryNext(); ok; e, ok = c.Session().TryNext() {
		if e.State == wire.StateDisconnected {
			t.Fatal("the connection was dropped")
		}
	}
}
