package zkcoord_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// Every listing returned with a create includes the created node, however
// many creates race, with or without a chroot, parent present or not.
func TestCreateProtectedAndListSeesItsOwnNode(t *testing.T) {
	c := zktest.Start(t)
	for _, root := range []string{"", "/rooted"} {
		s := connect(t, zkcoord.Config{Servers: c.Servers(), Chroot: root})
		ctx := testCtx(t, 60*time.Second)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				node, kids, err := s.CreateProtectedAndList(ctx, "/race/dir", "lock-", nil, zkcoord.FlagEphemeralSequential)
				if err != nil {
					errs <- err
					return
				}
				if !slices.Contains(kids, zkcoord.Base(node)) {
					t.Errorf("listing %d children lacks own node %s", len(kids), node)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		kids, _, err := s.Children(ctx, "/race/dir")
		if err != nil || len(kids) != 64 {
			t.Fatalf("%d children (%v), want 64", len(kids), err)
		}
	}
}

// A lost reply on the fast path still yields exactly one node.
func TestCreateProtectedAndListAcrossDroppedReply(t *testing.T) {
	c := zktest.Start(t)
	d := newFaultyDialer()
	s := connect(t, zkcoord.Config{Servers: c.Servers(), Dialer: d.Dial})
	ctx := testCtx(t, 60*time.Second)
	if err := s.EnsurePath(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	d.dropReply.Store(true)
	node, kids, err := s.CreateProtectedAndList(ctx, "/d", "lock-", nil, zkcoord.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.dropped:
	default:
		t.Fatal("no reply was dropped: the test did not exercise the fault")
	}
	if len(kids) != 1 || "/d/"+kids[0] != node {
		t.Fatalf("children %v, want exactly %s", kids, node)
	}
}

// The reads sent right behind a transaction see what it wrote when it
// succeeds, and what stood before when it fails.
func TestMultiThenReadsSeeTheTransaction(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	ctx := testCtx(t, 30*time.Second)
	if err := s.EnsurePath(ctx, "/multithen"); err != nil {
		t.Fatal(err)
	}
	current := int32(0) // the node's version
	for i, tc := range []struct {
		version int32 // the set's expected version
		ok      bool
	}{{0, true}, {0, false}, {1, true}} {
		var (
			st  *zkcoord.Stat
			w   <-chan zkcoord.Event
			err error
		)
		_, merr := s.MultiThen(ctx, []zkcoord.Op{zkcoord.SetOp("/multithen", []byte{byte(i)}, tc.version)},
			func(ctx context.Context) { _, st, w, err = s.GetW(ctx, "/multithen") })
		if (merr == nil) != tc.ok {
			t.Fatalf("step %d: transaction: %v", i, merr)
		}
		if err != nil {
			t.Fatalf("step %d: read behind: %v", i, err)
		}
		if tc.ok {
			current++
		}
		if want := current; st.Version != want {
			t.Fatalf("step %d: read behind the transaction sees version %d, want %d", i, st.Version, want)
		}
		if w == nil {
			t.Fatalf("step %d: no watch", i)
		}
	}
}
