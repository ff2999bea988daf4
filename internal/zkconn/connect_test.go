package zkconn

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/zktest"
)

func TestServerBehindOurLastZxidIsSkipped(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 10*time.Second)
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := c.Create(ctx, "/z", nil, openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	// A client that has seen a zxid the server has not reached is
	// refused (ZooKeeperServer closes the connection without an answer):
	// that is not an expiry, and the server is passed over.
	c.mu.Lock()
	seen := c.lastZxid
	c.lastZxid = seen + 1<<32
	c.mu.Unlock()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cn, err := c.connect(short)
	if err == nil {
		cn.nc.Close()
		t.Fatal("a server behind our last zxid accepted the session")
	}
	if errors.Is(err, wire.ErrSessionExpired) || !errors.Is(err, ErrNoServer) {
		t.Fatalf("connecting to a server behind us: %v; want no server, not an expiry", err)
	}
	c.mu.Lock()
	c.lastZxid = seen
	c.mu.Unlock()
	if _, _, _, err := c.Exists(ctx, "/z", false); err != nil {
		t.Fatalf("the session after the refused attempts: %v", err)
	}
}

func TestHostNamesDialedOnEveryAttempt(t *testing.T) {
	cluster := zktest.Start(t)
	proxy := cluster.NewProxy(t)
	_, port, _ := net.SplitHostPort(proxy.Servers()[0])
	name := "localhost:" + port
	var mu sync.Mutex
	var dialed []string
	var d net.Dialer
	ctx := testCtx(t, 30*time.Second)
	c, err := Dial(ctx, Config{Servers: []string{name}, SessionTimeout: 10 * time.Second,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			return d.DialContext(ctx, network, addr)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateDisconnected)
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, wire.StateSyncConnected)
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) < 2 {
		t.Fatalf("dialed %v; want the first connection and the re-attach", dialed)
	}
	for _, a := range dialed {
		if !strings.HasPrefix(a, "localhost:") {
			t.Fatalf("dialed %q: a resolved address was kept instead of the name", a)
		}
	}
}
