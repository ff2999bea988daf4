package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

// A failed socket write while the lease sets its watch again is a
// connection loss: the watch is set after reconnecting, so a later
// deletion of the node still ends the lease.
func TestLeaseRewatchAcrossRawWriteError(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	var f testkit.WriteFault
	a := connect(t, func(c *zkcoord.Config) { c.Dialer = f.Dial })
	admin := connect(t)
	l, err := newMutex(t, a, testDir(t)).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.Token() // the lease watches its node from here on
	hit := f.FailNext(testkit.OpGetData, l.Path())
	if _, err := admin.Set(ctx, l.Path(), []byte("poke"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hit:
	case <-ctx.Done():
		t.Fatal("the lease never set its watch again")
	}
	if err := admin.Delete(ctx, l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("the lease's node was deleted by someone else and the lease did not end")
	}
	if !errors.Is(l.Err(), lock.ErrNodeDeleted) {
		t.Errorf("Err %v, want ErrNodeDeleted", l.Err())
	}
}

// A lease whose node can no longer be watched cannot notice its deletion:
// it is lost at once, with the server's answer as the cause.
func TestLeaseUnwatchableNodeIsLost(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	p := cluster.NewProxy(t)
	a := connect(t, withServers(p.Servers()), withTimeout(20*time.Second))
	l, err := newMutex(t, a, testDir(t)).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.Token()
	// Another client changes the node, which makes the holder watch it
	// again, and at once takes away the holder's right to read it: the
	// server does not notify a watcher that may not read the node, so the
	// holder is slowed down to learn of the change before it loses that
	// right and to ask for the new watch after.
	if err := p.Delay(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	admin, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers, SessionTimeout: 6 * time.Second,
		Auth: []zkcoord.Auth{{Scheme: "digest", Credential: "admin:pw"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Set(ctx, l.Path(), []byte("poke"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SetACL(ctx, l.Path(), zkcoord.DigestACL(zkcoord.PermAll, "admin", "pw"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("the lease kept running without a watch on its node")
	}
	if !errors.Is(l.Err(), lock.ErrLost) || !errors.Is(l.Err(), zkcoord.ErrNoAuth) {
		t.Errorf("Err %v, want ErrLost and ErrNoAuth", l.Err())
	}
}
