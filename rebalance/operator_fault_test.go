package rebalance_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// A's create of resource x fails with the connection before it reaches the
// server and, before A looks, operator B adds x. A cannot tell B's node
// from one it created: AddResource does not report that it added x, but
// that x is registered (ErrResourceExists), by it or another
// (ErrOutcomeUnknown).
func TestAddResourceNeverTakesAnotherOperatorsAddForItsOwn(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	root, group := newRoot(t), "g"
	f := new(testkit.WriteFault)
	a := testkit.Connect(t, cluster.Servers(), func(c *zkcoord.Config) { c.Dialer = f.Dial })
	b := testkit.Connect(t, cluster.Servers())
	if err := rebalance.EnsureGroupForTest(ctx, a, root, group); err != nil {
		t.Fatal(err)
	}
	var bErr error
	rebalance.SetOperatorOutcomeUnknownHookForTest(t, func() { bErr = rebalance.AddResource(ctx, b, zkcoord.Join(root, group), "x") })
	hit := f.FailNext(testkit.OpCreate, "/resources/x")

	err := rebalance.AddResource(ctx, a, zkcoord.Join(root, group), "x")
	select {
	case <-hit:
	default:
		t.Fatal("no create failed: the fault was not exercised")
	}
	if bErr != nil {
		t.Fatalf("B's AddResource: %v", bErr)
	}
	if !errors.Is(err, rebalance.ErrResourceExists) || !errors.Is(err, zkcoord.ErrOutcomeUnknown) {
		t.Fatalf("A's AddResource = %v; want an error wrapping ErrResourceExists and ErrOutcomeUnknown (B added x)", err)
	}
	if rs, err := rebalance.ListResources(ctx, b, zkcoord.Join(root, group)); err != nil || fmt.Sprint(rs) != "[x]" {
		t.Fatalf("resources: %v, %v; want [x]", rs, err)
	}
}

// A create whose request never reached the server is sent again: with no
// resource node there, AddResource adds x and reports success.
func TestAddResourceWhoseRequestIsLost(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	root, group := newRoot(t), "g"
	f := new(testkit.WriteFault)
	a := testkit.Connect(t, cluster.Servers(), func(c *zkcoord.Config) { c.Dialer = f.Dial })
	if err := rebalance.EnsureGroupForTest(ctx, a, root, group); err != nil {
		t.Fatal(err)
	}
	hit := f.FailNext(testkit.OpCreate, "/resources/x")
	if err := rebalance.AddResource(ctx, a, zkcoord.Join(root, group), "x"); err != nil {
		t.Fatalf("AddResource with a lost request: %v", err)
	}
	select {
	case <-hit:
	default:
		t.Fatal("no create failed: the fault was not exercised")
	}
	if rs, err := rebalance.ListResources(ctx, a, zkcoord.Join(root, group)); err != nil || fmt.Sprint(rs) != "[x]" {
		t.Fatalf("resources: %v, %v; want [x]", rs, err)
	}
}

// A's delete of resource x is applied and its reply lost; before A looks,
// operator B adds x again. A's RemoveResource is done (the x it found is
// gone) and never deletes B's x.
func TestRemoveResourceSparesAResourceAddedAgain(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	root, group := newRoot(t), "g"
	p := cluster.NewProxy(t)
	a := testkit.Connect(t, p.Servers())
	b := testkit.Connect(t, cluster.Servers())
	resources := func() string {
		_, path, _, _ := rebalance.PathsForTest(root, group)
		return path
	}()
	testkit.UntilLost(t, func(delay time.Duration) bool {
		id := fmt.Sprintf("x%d", delay.Milliseconds())
		if err := rebalance.AddResource(ctx, b, zkcoord.Join(root, group), id); err != nil {
			t.Fatal(err)
		}
		var bErr error
		unknown := make(chan struct{}, 1)
		rebalance.SetOperatorOutcomeUnknownHookForTest(t, func() {
			bErr = rebalance.AddResource(ctx, b, zkcoord.Join(root, group), id)
			select {
			case unknown <- struct{}{}:
			default:
			}
		})
		lost, err := testkit.LoseReply(t, ctx, p, b, zkcoord.Join(resources, id), delay, unknown, func() error {
			return rebalance.RemoveResource(ctx, a, zkcoord.Join(root, group), id)
		})
		if err != nil {
			t.Fatalf("RemoveResource: %v", err)
		}
		if !lost {
			return false
		}
		if bErr != nil {
			t.Fatalf("B's AddResource: %v", bErr)
		}
		if ok, _, err := b.Exists(ctx, zkcoord.Join(resources, id)); err != nil || !ok {
			t.Fatalf("resource %s added again by B: exists %v, %v; want it kept", id, ok, err)
		}
		return true
	})
}
