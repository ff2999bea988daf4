package node

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
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
	createdTimes(t, k, 2)
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

// While another Session's node is in the way (Conflict), Set does not
// write it: it fails with zkcoord.ErrNotOwner, and the new data goes into
// the keeper's own node once that is created again.
func TestKeepSetSparesAnotherSessionsNode(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess, other := connect(t), connect(t)
	k, err := Keep(ctx, sess, "/svc/y", []byte("mine"))
	if err != nil {
		t.Fatal(err)
	}
	// Another Session replaces the keeper's node at once with its own.
	if _, err := other.Multi(ctx, zkcoord.DeleteOp("/svc/y", -1), zkcoord.CreateOp("/svc/y", []byte("theirs"), zkcoord.FlagEphemeral)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the keeper to see the conflict", k.Conflict)
	if err := k.Set(ctx, []byte("new")); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Errorf("Set during a conflict: %v, want zkcoord.ErrNotOwner", err)
	}
	if data, _, err := other.Get(ctx, "/svc/y"); err != nil || string(data) != "theirs" {
		t.Fatalf("the other Session's node holds %q (%v) after Set, want \"theirs\"", data, err)
	}
	if err := other.Delete(ctx, "/svc/y", -1); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the keeper's node, with the new data", func() bool {
		data, st, err := sess.Get(ctx, "/svc/y")
		return err == nil && string(data) == "new" && st.EphemeralOwner == sess.ID()
	})
	if err := k.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Two keepers of one TTL node: the second waits for the first's node to go
// instead of taking it over, never writes it, and its Close does not
// delete it.
func TestKeepTTLSparesAnotherKeepersNode(t *testing.T) {
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+
		" -Dzookeeper.extendedTypesEnabled=true -Dznode.container.checkIntervalMs=100"))
	c := zktest.Start(t)
	ctx := testkit.Ctx(t, time.Minute)
	a, b, observer := testkit.Connect(t, c.Servers()), testkit.Connect(t, c.Servers()), testkit.Connect(t, c.Servers())
	const ttl = 300 * time.Millisecond
	ka, err := Keep(ctx, a, "/ttl", []byte("a"), WithTTL(ttl))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Kept, 1)
	go func() {
		k, err := Keep(ctx, b, "/ttl", []byte("b"), WithTTL(ttl))
		if err != nil {
			t.Errorf("second Keep: %v", err)
		}
		got <- k
	}()
	// Over a TTL, in which the second keeper would have touched the node
	// had it taken it for its own.
	short, cancel := context.WithTimeout(ctx, 2*ttl)
	defer cancel()
	select {
	case kb := <-got:
		kb.Close(ctx)
		data, _, err := observer.Get(ctx, "/ttl")
		t.Fatalf("the second keeper took the first's node over; after its Close the node holds %q (%v)", data, err)
	case <-short.Done():
	}
	if data, _, err := observer.Get(ctx, "/ttl"); err != nil || string(data) != "a" {
		t.Fatalf("the first keeper's node holds %q (%v), want \"a\"", data, err)
	}
	if err := ka.Close(ctx); err != nil {
		t.Fatal(err)
	}
	kb := <-got
	if kb == nil {
		t.FailNow()
	}
	if data, _, err := observer.Get(ctx, "/ttl"); err != nil || string(data) != "b" {
		t.Fatalf("after the first keeper's Close the node holds %q (%v), want the second's \"b\"", data, err)
	}
	if err := kb.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := observer.Exists(ctx, "/ttl"); err != nil || ok {
		t.Fatalf("the node outlived its keeper's Close: %v, %v", ok, err)
	}
}
