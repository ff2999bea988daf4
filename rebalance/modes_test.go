package rebalance_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// TestModes runs joins, a leave, a resource addition and a removal in every
// mode, checking exclusivity throughout and balance once settled. In the
// resource-barrier and global-barrier modes every rebalancing stops every
// resource, which the test checks too.
func TestModes(t *testing.T) {
	for _, mode := range []rebalance.Mode{rebalance.Incremental, rebalance.ResourceBarrier, rebalance.GlobalBarrier} {
		t.Run(mode.String(), func(t *testing.T) {
			root, group := newRoot(t), "g"
			op := connect(t)
			resources := resourceIDs(10)
			addResources(t, op, root, group, resources...)
			rec := newRecorder()
			ctx := testCtx(t, 120*time.Second)
			var clients []*rebalance.Client
			settle := func(what string) {
				t.Helper()
				testkit.WaitFor(t, 30*time.Second, what, func() error { return balanced(ctx, op, root, group, clients, resources) })
				rec.check(t)
			}
			for i := range 3 {
				clients = append(clients, start(t, connect(t), root, group, rec.handler(fmt.Sprintf("c%d", i)), rebalance.WithMode(mode)))
			}
			settle("three clients")

			before := rec.stopCounts()
			clients = append(clients, start(t, connect(t), root, group, rec.handler("c3"), rebalance.WithMode(mode)))
			settle("after a join")
			after := rec.stopCounts()
			restarted := 0
			for _, r := range resources {
				if after[r] > before[r] {
					restarted++
				}
			}
			switch mode {
			case rebalance.Incremental:
				if restarted > 4 {
					t.Errorf("incremental join restarted %d resources", restarted)
				}
			default:
				if restarted != len(resources) {
					t.Errorf("%v join restarted %d of %d resources, want all", mode, restarted, len(resources))
				}
			}

			addResources(t, op, root, group, "new")
			resources = append(resources, "new")
			settle("after adding a resource")

			if err := rebalance.RemoveResource(ctx, op, zkcoord.Join(root, group), resources[0]); err != nil {
				t.Fatal(err)
			}
			resources = resources[1:]
			settle("after removing a resource")

			if err := clients[1].Stop(ctx); err != nil {
				t.Fatal(err)
			}
			clients = append(clients[:1], clients[2:]...)
			settle("after a leave")

			d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
			if err != nil {
				t.Fatal(err)
			}
			if mode == rebalance.GlobalBarrier {
				if d.Status == nil || d.Status.Phase != rebalance.PhaseStartConfirmed {
					t.Errorf("global status %+v, want StartConfirmed", d.Status)
				}
			}
			if len(d.Barriers) != len(resources) {
				t.Errorf("%d barriers for %d resources: %+v", len(d.Barriers), len(resources), d.Barriers)
			}
		})
	}
}
