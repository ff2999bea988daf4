package zkconn

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/zktest"
)

// digestSASL is DIGEST-MD5 for user with the password *password holds
// when a connection opens.
func digestSASL(user string, password *atomic.Value) *SASL {
	return &SASL{Mechanism: "DIGEST-MD5", Start: func(context.Context, string) ([]byte, SASLStep, error) {
		return []byte{}, NewDigestMD5(user, password.Load().(string)).Next, nil
	}}
}

// Requests queued while the client is disconnected go out on the next
// connection only after its SASL exchange: a read of a node only the
// SASL user may read, issued while cut off, succeeds. When the server
// refuses the credentials on a re-attach, the client ends at once with
// AuthFailed: the request queued then fails as never sent, the session
// watch hears AuthFailed, and Err says why.
func TestSASLBeforeQueuedRequests(t *testing.T) {
	cluster := zktest.Start(t, zktest.WithSASLDigest(map[string]string{"bob": "pw"}))
	proxy := cluster.NewProxy(t)
	var password atomic.Value
	password.Store("pw")
	ctx := testCtx(t, time.Minute)
	c, err := Dial(ctx, Config{Servers: proxy.Servers(), SessionTimeout: 20 * time.Second, SASL: digestSASL("bob", &password)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	acl := []wire.ACL{{Perms: wire.PermAll, ID: wire.ID{Scheme: "sasl", ID: "bob"}}}
	if _, _, err := c.Create(ctx, "/bobs", []byte("x"), acl, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	read := func() *Call {
		return c.Start(ctx, wire.OpGetData, &wire.GetDataRequest{Path: "/bobs"}, &wire.GetDataResponse{})
	}

	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateDisconnected)
	queued := read()
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	if _, err := queued.Wait(); err != nil {
		t.Fatalf("a read queued while disconnected: %v", err)
	}
	waitState(t, c, wire.StateSyncConnected)

	password.Store("changed")
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateDisconnected)
	queued = read()
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	if _, err := queued.Wait(); !errors.Is(err, ErrNotSent) || !errors.Is(err, wire.ErrAuthFailed) {
		t.Fatalf("a read queued before a refused re-attach: %v; want not sent, AuthFailed", err)
	}
	waitState(t, c, wire.StateAuthFailed)
	<-c.Done()
	if err := c.Err(); !errors.Is(err, wire.ErrAuthFailed) {
		t.Fatalf("Err = %v, want AuthFailed", err)
	}
}

// A mechanism still starting (asking a KDC) when the time runs out has
// not been refused: Dial fails for want of a server, not AuthFailed.
func TestSASLStartCutShortIsNotARefusal(t *testing.T) {
	cluster := zktest.Start(t)
	ctx, cancel := context.WithTimeout(testCtx(t, time.Minute), 2*time.Second)
	defer cancel()
	slow := &SASL{Mechanism: "SLOW", Start: func(ctx context.Context, _ string) ([]byte, SASLStep, error) {
		<-ctx.Done()
		return nil, nil, errors.New("no ticket yet")
	}}
	c, err := Dial(ctx, Config{Servers: cluster.Servers(), SessionTimeout: 10 * time.Second, SASL: slow})
	if err == nil {
		c.Close(context.Background())
		t.Fatal("Dial succeeded without SASL")
	}
	if errors.Is(err, wire.ErrAuthFailed) || !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial with a mechanism cut short: %v; want no server, not AuthFailed", err)
	}
}
