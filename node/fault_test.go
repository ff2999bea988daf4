package node

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// A's TTL create fails with the connection and, before A looks, keeper B
// creates the TTL node with exactly the data A meant to write. A cannot
// tell B's node from its own, so it never takes it for its own: its Keep
// waits (over a TTL, it does not return), and creates A's own node once
// B's is gone.
func TestKeepTTLNeverTakesAnEqualNodeAfterALostCreate(t *testing.T) {
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+
		" -Dzookeeper.extendedTypesEnabled=true -Dznode.container.checkIntervalMs=100"))
	c := zktest.Start(t)
	ctx := testkit.Ctx(t, time.Minute)
	f := new(testkit.WriteFault)
	a := testkit.Connect(t, c.Servers(), func(cfg *zkcoord.Config) { cfg.Dialer = f.Dial })
	b, observer := testkit.Connect(t, c.Servers()), testkit.Connect(t, c.Servers())
	const ttl = 300 * time.Millisecond
	var (
		kb    *Kept
		bErr  error
		bDone = make(chan struct{}) // closed once B's Keep returned
	)
	testHookOutcomeUnknown = func() {
		defer close(bDone)
		kb, bErr = Keep(ctx, b, "/ttl", []byte("same"), WithTTL(ttl))
	}
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
	const opCreateTTL = 21 // ZooKeeper's opcode for a TTL create
	hit := f.FailNext(opCreateTTL, "/ttl")

	got := make(chan *Kept, 1)
	go func() {
		k, err := Keep(ctx, a, "/ttl", []byte("same"), WithTTL(ttl))
		if err != nil {
			t.Errorf("A's Keep: %v", err)
		}
		got <- k
	}()
	select {
	case <-bDone:
	case <-ctx.Done():
		t.Fatal("no create failed: the fault was not exercised")
	}
	<-hit
	// Over a TTL, in which A would have touched B's node had it taken it
	// for its own.
	short, cancel := context.WithTimeout(ctx, 2*ttl)
	defer cancel()
	select {
	case ka := <-got:
		if ka != nil {
			ka.Close(ctx)
		}
		t.Fatal("A's Keep returned while B's node was in the way: it took B's node for its own")
	case <-short.Done():
	}
	if bErr != nil {
		t.Fatalf("B's Keep: %v", bErr)
	}
	_, st, err := observer.Get(ctx, "/ttl")
	if err != nil {
		t.Fatalf("B's node: %v", err)
	}
	bCzxid := st.Czxid
	if err := kb.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ka := <-got
	if ka == nil {
		t.FailNow()
	}
	_, st, err = observer.Get(ctx, "/ttl")
	if err != nil || st.Czxid == bCzxid {
		t.Fatalf("after B's Close: %+v, %v; want A's own node", st, err)
	}
	if err := ka.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := observer.Exists(ctx, "/ttl"); err != nil || ok {
		t.Fatalf("A's node outlived its Close: %v, %v", ok, err)
	}
}

// A's TTL create returns and, before A looks at its node, someone deletes
// it and keeper B creates its own TTL node with other data. A node at
// version 0 with other data than A created cannot be A's: A's Keep does
// not take it for its own, waits while it is there, and creates A's own
// node once B's is gone.
func TestKeepTTLNeverTakesAnotherKeepersNodeAfterItsCreate(t *testing.T) {
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+
		" -Dzookeeper.extendedTypesEnabled=true"))
	c := zktest.Start(t)
	ctx := testkit.Ctx(t, time.Minute)
	a, b := testkit.Connect(t, c.Servers()), testkit.Connect(t, c.Servers())
	var (
		kb    *Kept
		bErr  error
		bDone = make(chan struct{}) // closed once B's node replaced A's
	)
	var fired atomic.Bool // only A's first create: B's and A's next run as they are
	testHookCreated = func() {
		if !fired.CompareAndSwap(false, true) {
			return
		}
		defer close(bDone)
		if bErr = b.Delete(ctx, "/ttl", -1); bErr == nil {
			kb, bErr = Keep(ctx, b, "/ttl", []byte("b"), WithTTL(time.Minute))
		}
	}
	t.Cleanup(func() { testHookCreated = nil })

	got := make(chan *Kept, 1)
	go func() {
		k, err := Keep(ctx, a, "/ttl", []byte("a"), WithTTL(time.Minute))
		if err != nil {
			t.Errorf("A's Keep: %v", err)
		}
		got <- k
	}()
	select {
	case <-bDone:
	case <-ctx.Done():
		t.Fatal("A's create never returned")
	}
	if bErr != nil {
		t.Fatalf("replacing A's node by B's: %v", bErr)
	}
	// Over a few round trips, in which A would have returned had it taken
	// B's node for its own.
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	select {
	case ka := <-got:
		conflict := ka != nil && ka.Conflict()
		if ka != nil {
			ka.Close(ctx)
		}
		data, _, err := b.Get(ctx, "/ttl")
		t.Fatalf("A's Keep returned while B's node was in the way (conflict %v): it took B's node for its own; after A's Close the node holds %q (%v)", conflict, data, err)
	case <-short.Done():
	}
	_, st, err := b.Get(ctx, "/ttl")
	if err != nil {
		t.Fatal(err)
	}
	if err := kb.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ka := <-got
	if ka == nil {
		t.FailNow()
	}
	data, mine, err := b.Get(ctx, "/ttl")
	if err != nil || string(data) != "a" || mine.Czxid == st.Czxid {
		t.Fatalf("after B's Close: %q, %+v, %v; want A's own node", data, mine, err)
	}
	if err := ka.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
