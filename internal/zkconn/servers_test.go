package zkconn

import (
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/zktest"
)

// A new server list keeps the connection while its server is listed, and
// moves the session to a listed server when it is not.
func TestSetServersMovesOnlyWhenTheServerLeaves(t *testing.T) {
	cluster := zktest.Start(t, zktest.WithServers(3))
	all := cluster.Servers()
	c := dial(t, all[:1], 20*time.Second)
	ctx := testCtx(t, 60*time.Second)
	id := c.SessionID()
	waitState(t, c, wire.StateSyncConnected)

	if dropped, err := c.SetServers(all[:2]); err != nil || dropped {
		t.Fatalf("SetServers with the current server: dropped %v, err %v", dropped, err)
	}
	if got := c.Servers(); !sameSet(got, all[:2]) {
		t.Fatalf("Servers() = %v, want %v", got, all[:2])
	}
	if _, err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if server, up := c.Connected(); !up || server != all[0] {
		t.Fatalf("connected to %q (up %v), want %q", server, up, all[0])
	}

	dropped, err := c.SetServers(all[1:])
	if err != nil || !dropped {
		t.Fatalf("SetServers without the current server: dropped %v, err %v", dropped, err)
	}
	waitState(t, c, wire.StateDisconnected)
	waitState(t, c, wire.StateSyncConnected)
	if _, err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if server, _ := c.Connected(); !slices.Contains(all[1:], server) {
		t.Fatalf("connected to %q, want one of %v", server, all[1:])
	}
	if c.SessionID() != id {
		t.Fatalf("session 0x%x became 0x%x", id, c.SessionID())
	}
	if _, err := c.SetServers(nil); err == nil {
		t.Fatal("SetServers(nil) succeeded")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
