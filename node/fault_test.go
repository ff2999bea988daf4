package node

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/testkit"
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
