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

// TestIncrementalJoinMovesFew: after a join in incremental mode, at most
// ceil(M/N)+1 resources stop, and every other resource keeps running.
func TestIncrementalJoinMovesFew(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(12)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	var clients []*rebalance.Client
	for i := range 3 {
		clients = append(clients, start(t, connect(t), root, group, rec.handler(fmt.Sprintf("c%d", i))))
	}
	ctx := testCtx(t, 60*time.Second)
	testkit.WaitFor(t, 30*time.Second, "balanced with 3", func() error { return balanced(ctx, op, root, group, clients, resources) })
	rec.check(t)

	before := rec.stopCounts()
	clients = append(clients, start(t, connect(t), root, group, rec.handler("c3")))
	testkit.WaitFor(t, 30*time.Second, "balanced with 4", func() error { return balanced(ctx, op, root, group, clients, resources) })
	after := rec.stopCounts()
	var stopped []string
	for _, r := range resources {
		if after[r] != before[r] {
			stopped = append(stopped, r)
		}
	}
	limit := (len(resources)+3)/4 + 1
	if len(stopped) > limit {
		t.Errorf("join stopped %d resources %v, want at most %d", len(stopped), stopped, limit)
	}
	mine := map[string]bool{}
	for _, a := range clients[3].Assignments() {
		mine[a.Resource] = true
	}
	for _, r := range stopped {
		if !mine[r] {
			t.Errorf("resource %s was stopped but did not move to the new client", r)
		}
	}
	rec.check(t)

	// A graceful leave hands the leaver's resources to the others.
	if err := clients[0].Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := clients[0].Err(); err != nil {
		t.Fatalf("Err after Stop: %v", err)
	}
	if s := clients[0].State(); s != rebalance.Stopped {
		t.Fatalf("state after Stop: %v", s)
	}
	clients = clients[1:]
	testkit.WaitFor(t, 30*time.Second, "balanced after leave", func() error { return balanced(ctx, op, root, group, clients, resources) })
	rec.check(t)
}

// TestCoordinatorRoles: exactly one client is coordinator and it is the
// oldest; when it leaves the next oldest takes over.
func TestCoordinatorRoles(t *testing.T) {
	root, group := newRoot(t), "g"
	rec := newRecorder()
	a := start(t, connect(t), root, group, rec.handler("a"))
	b := start(t, connect(t), root, group, rec.handler("b"))
	testkit.WaitFor(t, 30*time.Second, "roles", func() error {
		if a.State() != rebalance.Coordinator || b.State() != rebalance.Follower {
			return fmt.Errorf("a %v, b %v", a.State(), b.State())
		}
		return nil
	})
	ctx := testCtx(t, 30*time.Second)
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "b coordinator", func() error {
		if b.State() != rebalance.Coordinator {
			return fmt.Errorf("b %v", b.State())
		}
		return nil
	})
	d, err := rebalance.Describe(ctx, connect(t), zkcoord.Join(root, group))
	if err != nil {
		t.Fatal(err)
	}
	if d.Coordinator != b.ID() || len(d.Members) != 1 || d.TermHolder != b.ID() {
		t.Fatalf("describe: coordinator %q term holder %q members %v, want %q", d.Coordinator, d.TermHolder, d.Members, b.ID())
	}
}

func TestOperators(t *testing.T) {
	root, group := newRoot(t), "g"
	sess := connect(t)
	ctx := testCtx(t, 30*time.Second)
	if rs, err := rebalance.ListResources(ctx, sess, zkcoord.Join(root, group)); err != nil || len(rs) != 0 {
		t.Fatalf("list of a missing group: %v, %v", rs, err)
	}
	addResources(t, sess, root, group, "b", "a")
	if err := rebalance.AddResource(ctx, sess, zkcoord.Join(root, group), "a"); !errors.Is(err, rebalance.ErrResourceExists) {
		t.Fatalf("add twice: %v", err)
	}
	for _, bad := range []string{"", "a/b", "..", "x\x00"} {
		if err := rebalance.AddResource(ctx, sess, zkcoord.Join(root, group), bad); !errors.Is(err, rebalance.ErrInvalidOption) {
			t.Errorf("add %q: %v, want ErrInvalidOption", bad, err)
		}
	}
	if err := rebalance.AddResource(ctx, sess, "relative/g", "x"); !errors.Is(err, rebalance.ErrInvalidOption) {
		t.Errorf("bad group path: %v", err)
	}
	rs, err := rebalance.ListResources(ctx, sess, zkcoord.Join(root, group))
	if err != nil || fmt.Sprint(rs) != "[a b]" {
		t.Fatalf("list: %v, %v", rs, err)
	}
	if err := rebalance.RemoveResource(ctx, sess, zkcoord.Join(root, group), "a"); err != nil {
		t.Fatal(err)
	}
	if err := rebalance.RemoveResource(ctx, sess, zkcoord.Join(root, group), "a"); !errors.Is(err, rebalance.ErrNoResource) {
		t.Fatalf("remove twice: %v", err)
	}
	if _, err := rebalance.Describe(ctx, sess, zkcoord.Join(root, "nosuch")); !errors.Is(err, rebalance.ErrNoGroup) {
		t.Fatalf("describe missing group: %v", err)
	}
}
