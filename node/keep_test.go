package node

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

func TestKeepRecreatesAndSets(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	k, err := Keep(ctx, sess, "/svc/instance", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	data, st, err := sess.Get(ctx, "/svc/instance")
	if err != nil || string(data) != "v1" || st.EphemeralOwner != sess.ID() {
		t.Fatalf("node %q %+v, %v", data, st, err)
	}
	other := connect(t)
	if err := other.Delete(ctx, "/svc/instance", -1); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the node created again", func() bool { return k.Created() == 2 })
	if err := k.Set(ctx, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := sess.Get(ctx, "/svc/instance"); string(data) != "v2" {
		t.Fatalf("after Set: %q", data)
	}
	if err := other.Delete(ctx, "/svc/instance", -1); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the node created again with the new data", func() bool {
		data, _, err := sess.Get(ctx, "/svc/instance")
		return err == nil && string(data) == "v2"
	})
	if err := k.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-k.Done()
	if ok, _, _ := sess.Exists(ctx, "/svc/instance"); ok {
		t.Fatal("the node outlived Close")
	}
}

// A node another Session holds is waited for, not taken over.
func TestKeepWaitsForAnotherSessionsNode(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	holder := connect(t)
	if err := holder.EnsurePath(ctx, "/svc"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Create(ctx, "/svc/x", []byte("theirs"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	sess := connect(t)
	got := make(chan *Kept, 1)
	go func() {
		k, err := Keep(ctx, sess, "/svc/x", []byte("mine"))
		if err != nil {
			t.Errorf("Keep: %v", err)
		}
		got <- k
	}()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	select {
	case <-got:
		t.Fatal("Keep returned while another Session's node was in the way")
	case <-short.Done():
	}
	if err := holder.Close(ctx); err != nil {
		t.Fatal(err)
	}
	k := <-got
	if data, st, err := sess.Get(ctx, "/svc/x"); err != nil || string(data) != "mine" || st.EphemeralOwner != sess.ID() {
		t.Fatalf("node %q %+v, %v", data, st, err)
	}
	if k.Conflict() {
		t.Fatal("Conflict after taking the node")
	}
	if err := k.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Under zkcoord.Supervise, an ephemeral node is created again on every new
// Session: across a server-side expiry it is back, owned by the new one.
func TestKeepAcrossSessions(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sessions := make(chan *zkcoord.Session, 4)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- zkcoord.Supervise(sctx, zkcoord.Config{Servers: servers, SessionTimeout: 2 * time.Second},
			func(ctx context.Context, sess *zkcoord.Session) error {
				k, err := Keep(ctx, sess, "/kept/across", []byte("me"))
				if err != nil {
					return err
				}
				sessions <- sess
				<-k.Done()
				return nil
			})
	}()
	first := <-sessions
	if err := cluster.ExpireSession(ctx, first.ID(), first.Password()); err != nil {
		t.Fatal(err)
	}
	second := <-sessions
	observer := connect(t, func(c *zkcoord.Config) { c.Chroot = "" })
	_, st, err := observer.Exists(ctx, "/kept/across")
	if err != nil || st == nil || st.EphemeralOwner != second.ID() || second.ID() == first.ID() {
		t.Fatalf("node after recovery: %+v, %v; want owned by the new session", st, err)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Supervise = %v", err)
	}
}

// A TTL node outlives its keeper's Session and expires once nobody touches
// it; while kept, it is touched and stays.
func TestKeepTTL(t *testing.T) {
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+
		" -Dzookeeper.extendedTypesEnabled=true -Dznode.container.checkIntervalMs=100"))
	c := zktest.Start(t)
	ctx := testkit.Ctx(t, time.Minute)
	keeper := testkit.Connect(t, c.Servers())
	k, err := Keep(ctx, keeper, "/ttl", []byte("alive"), WithTTL(600*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	observer := testkit.Connect(t, c.Servers())
	deadline := time.Now().Add(2 * time.Second) // over three TTLs
	for time.Now().Before(deadline) {
		if ok, _, err := observer.Exists(ctx, "/ttl"); err != nil || !ok {
			t.Fatalf("a kept TTL node vanished: %v, %v", ok, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if k.Created() != 1 {
		t.Fatalf("created %d times", k.Created())
	}
	if err := keeper.Close(ctx); err != nil { // the keeper crashes: no Close
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the untouched TTL node to expire", func() bool {
		ok, _, err := observer.Exists(ctx, "/ttl")
		return err == nil && !ok
	})
}
