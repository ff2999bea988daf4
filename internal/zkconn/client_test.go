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

func TestHandshakeNegotiatesTimeout(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), time.Hour)
	if c.SessionID() == 0 || len(c.Password()) != wire.PasswordLen {
		t.Fatalf("session 0x%x, password %x", c.SessionID(), c.Password())
	}
	if c.LastRenewal().IsZero() {
		t.Error("the handshake's answer did not count as a renewal")
	}
	if got := c.SessionTimeout(); got != zktest.MaxSessionTimeout {
		t.Errorf("asked for an hour, negotiated %v; want the server's maximum %v", got, zktest.MaxSessionTimeout)
	}
	low := dial(t, cluster.Servers(), time.Millisecond)
	if got := low.SessionTimeout(); got != cluster.MinSessionTimeout() {
		t.Errorf("asked for 1ms, negotiated %v; want the server's minimum %v", got, cluster.MinSessionTimeout())
	}
	if e := next(t, c.Session()); e.State != wire.StateSyncConnected {
		t.Errorf("first session event %+v, want SyncConnected", e)
	}
}

func TestCallsStartedInOrderAreWrittenInOrder(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 10*time.Second)
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := c.Create(ctx, "/order", nil, openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	// Other goroutines issue requests at the same time; the one
	// goroutine's requests still reach the server in the order started.
	noise, stopNoise := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for noise.Err() == nil {
			c.Exists(noise, "/order", false)
		}
	}()
	const n = 200
	calls := make([]*Call, n)
	resps := make([]wire.CreateResponse, n)
	for i := range calls {
		calls[i] = c.Start(ctx, wire.OpCreate, &wire.CreateRequest{Path: "/order/n-", Data: []byte(fmt.Sprint(i)), ACL: openACL, Flags: wire.ModePersistentSequential}, &resps[i])
	}
	var prev Reply
	for i, call := range calls {
		reply, err := call.Wait()
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if want := fmt.Sprintf("/order/n-%010d", i); resps[i].Path != want {
			t.Fatalf("create %d made %s, want %s: written out of order", i, resps[i].Path, want)
		}
		if i > 0 && (reply.Zxid <= prev.Zxid || reply.Sent.Before(prev.Sent)) {
			t.Fatalf("create %d: zxid %d sent %v after zxid %d sent %v", i, reply.Zxid, reply.Sent, prev.Zxid, prev.Sent)
		}
		prev = reply
	}
	stopNoise()
	<-done
}

func TestRepliesCarryWriteTimeAndPingsRenew(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), cluster.MinSessionTimeout())
	ctx := testCtx(t, 30*time.Second)
	before := time.Now()
	_, reply, _, err := c.Exists(ctx, "/", false)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if reply.Sent.Before(before) || reply.Sent.After(after) {
		t.Fatalf("sent at %v, not between the call's start %v and end %v", reply.Sent, before, after)
	}
	if r := c.LastRenewal(); r.Before(reply.Sent) {
		t.Fatalf("last renewal %v is before the answered request's write %v", r, reply.Sent)
	}
	// With no calls, pings renew the session: the renewal moves past now
	// within the ping interval (a third of two thirds of the timeout).
	idle := time.Now()
	wait.Until(t, c.SessionTimeout(), "a renewal while idle", func() bool { return c.LastRenewal().After(idle) })
	if _, up := c.Connected(); !up {
		t.Fatal("disconnected while idle")
	}
}

func TestContextEndingBeforeWriteMeansNotSent(t *testing.T) {
	cluster := zktest.Start(t)
	proxy := cluster.NewProxy(t)
	c := dial(t, proxy.Servers(), 10*time.Second)
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateDisconnected)
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _, err := c.Create(short, "/never", nil, openACL, wire.ModePersistent)
	if !errors.Is(err, ErrNotSent) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("create while disconnected: %v; want not sent, deadline exceeded", err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateSyncConnected)
	if _, _, _, err := c.Exists(testCtx(t, 20*time.Second), "/never", false); !errors.Is(err, wire.ErrNoNode) {
		t.Fatalf("the request not sent was written after all: exists says %v", err)
	}
}

func TestContextEndingAfterWriteMeansOutcomeUnknown(t *testing.T) {
	cluster := zktest.Start(t)
	proxy := cluster.NewProxy(t)
	c := dial(t, proxy.Servers(), 10*time.Second)
	id := c.SessionID()
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := c.Create(short, "/maybe", nil, openACL, wire.ModePersistent)
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNotSent) {
		t.Fatalf("create into a blackhole: %v; want outcome unknown", err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	// Healing closes the blackholed connection; the client re-attaches.
	waitState(t, c, wire.StateDisconnected)
	waitState(t, c, wire.StateSyncConnected)
	ctx := testCtx(t, 20*time.Second)
	if _, _, _, err := c.Exists(ctx, "/", false); err != nil {
		t.Fatalf("after healing: %v", err)
	}
	if c.SessionID() != id {
		t.Fatalf("session 0x%x became 0x%x", id, c.SessionID())
	}
}

func TestCutMidRequestIsConnectionLoss(t *testing.T) {
	cluster := zktest.Start(t)
	proxy := cluster.NewProxy(t)
	c := dial(t, proxy.Servers(), 10*time.Second)
	id := c.SessionID()
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 30*time.Second)
	call := c.Start(ctx, wire.OpCreate, &wire.CreateRequest{Path: "/cut", ACL: openACL}, nil)
	// Once the reader has noticed nothing for the read timeout it drops
	// the connection; the request in flight fails as a connection loss.
	_, err := call.Wait()
	var ne interface{ Timeout() bool }
	if !errors.Is(err, wire.ErrConnectionLoss) || errors.Is(err, ErrNotSent) || !errors.As(err, &ne) {
		t.Fatalf("request in flight on a silent connection: %v; want a connection loss wrapping the timeout", err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateDisconnected)
	waitState(t, c, wire.StateSyncConnected)
	if _, _, _, err := c.Exists(ctx, "/", false); err != nil {
		t.Fatalf("after healing: %v", err)
	}
	if c.SessionID() != id {
		t.Fatalf("session 0x%x became 0x%x", id, c.SessionID())
	}
}

func TestQueueIsBounded(t *testing.T) {
	cluster := zktest.Start(t)
	proxy := cluster.NewProxy(t)
	ctx := testCtx(t, 30*time.Second)
	c, err := Dial(ctx, Config{Servers: proxy.Servers(), SessionTimeout: 10 * time.Second, MaxQueued: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateDisconnected)
	// While disconnected, calls wait in the queue for the next
	// connection; beyond MaxQueued they wait for room, bounded by ctx.
	queued := []*Call{
		c.Start(ctx, wire.OpCreate, &wire.CreateRequest{Path: "/q1", ACL: openACL}, nil),
		c.Start(ctx, wire.OpCreate, &wire.CreateRequest{Path: "/q2", ACL: openACL}, nil),
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := c.Start(short, wire.OpCreate, &wire.CreateRequest{Path: "/q3", ACL: openACL}, nil).Wait(); !errors.Is(err, ErrNotSent) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call beyond the queue's bound: %v; want not sent when its context ended", err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	for i, call := range queued {
		if _, err := call.Wait(); err != nil {
			t.Fatalf("queued call %d, written on the next connection: %v", i, err)
		}
	}
	if _, _, _, err := c.Exists(ctx, "/q3", false); !errors.Is(err, wire.ErrNoNode) {
		t.Fatalf("the call refused for room was written: %v", err)
	}
}

func TestLossFailsQueuedRequestsAsNotSent(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 6*time.Second)
	ctx := testCtx(t, 60*time.Second)
	// A stopped server reads nothing: once the socket buffers are full
	// the writer blocks, and the calls behind it stay queued until the
	// read timeout drops the connection.
	if err := cluster.Server(0).Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			cluster.Server(0).Resume()
		}
	}()
	const n = 60 // 60 MB: more than loopback's socket buffers hold
	data := make([]byte, wire.MaxBuffer-4096)
	calls := make([]*Call, n)
	for i := range calls {
		calls[i] = c.Start(ctx, wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("/loss-%d", i), Data: data, ACL: openACL}, nil)
	}
	var unsent []int
	for i, call := range calls {
		_, err := call.Wait()
		if !errors.Is(err, wire.ErrConnectionLoss) {
			t.Fatalf("call %d: %v; want a connection loss", i, err)
		}
		if errors.Is(err, ErrNotSent) {
			unsent = append(unsent, i)
		} else if len(unsent) > 0 {
			t.Fatalf("call %d was written after call %d was not", i, unsent[0])
		}
	}
	if len(unsent) == 0 {
		t.Fatalf("all %d calls were written into a stopped server", n)
	}
	if err := cluster.Server(0).Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	waitState(t, c, wire.StateDisconnected)
	waitState(t, c, wire.StateSyncConnected)
	if _, err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	for _, i := range unsent {
		if _, _, _, err := c.Exists(ctx, fmt.Sprintf("/loss-%d", i), false); !errors.Is(err, wire.ErrNoNode) {
			t.Fatalf("call %d failed as not sent, but its node exists after re-attaching: %v", i, err)
		}
	}
	t.Logf("%d of %d calls were written before the loss", unsent[0], n)
}
