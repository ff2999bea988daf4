package rebalance_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// owns checks that the clients run exactly the resources, each once, that
// the numbers they run are one of want, and that the group is settled.
func owns(t *testing.T, op *zkcoord.Session, root, group string, clients []*rebalance.Client, resources []string, want ...[]int) error {
	t.Helper()
	seen := map[string]bool{}
	counts := make([]int, len(clients))
	for i, c := range clients {
		for _, a := range c.Assignments() {
			if seen[a.Resource] {
				return fmt.Errorf("%s run twice", a.Resource)
			}
			seen[a.Resource] = true
			counts[i]++
		}
	}
	if len(seen) != len(resources) {
		return fmt.Errorf("%d of %d resources run", len(seen), len(resources))
	}
	ok := false
	for _, w := range want {
		ok = ok || fmt.Sprint(w) == fmt.Sprint(counts)
	}
	if !ok {
		return fmt.Errorf("shares %v, want one of %v", counts, want)
	}
	d, err := rebalance.Describe(testCtx(t, 30*time.Second), op, zkcoord.Join(root, group))
	if err != nil {
		return err
	}
	if d.Rebalancing {
		return fmt.Errorf("still rebalancing: pending %v, unallocated %v", d.Pending, d.Unallocated)
	}
	return nil
}

// TestWeights: clients share in proportion to their weights, in every
// mode; in the incremental mode a join moves only the newcomer's share.
// Resources of different weights count their weight.
func TestWeights(t *testing.T) {
	for _, mode := range []rebalance.Mode{rebalance.Incremental, rebalance.GlobalBarrier} {
		t.Run(mode.String(), func(t *testing.T) {
			root, group := newRoot(t), "g"
			op := connect(t)
			resources := resourceIDs(12)
			addResources(t, op, root, group, resources...)
			rec := newRecorder()
			var clients []*rebalance.Client
			// The first client advertises no weight: it weighs 1.
			clients = append(clients, start(t, connect(t), root, group, rec.handler("c0"), rebalance.WithMode(mode)))
			for i, w := range []int64{2, 3} {
				clients = append(clients, start(t, connect(t), root, group, rec.handler(fmt.Sprint("c", i+1)),
					rebalance.WithMode(mode), rebalance.WithWeight(w)))
			}
			testkit.WaitFor(t, 30*time.Second, "shares 2, 4, 6", func() error {
				return owns(t, op, root, group, clients, resources, []int{2, 4, 6})
			})
			desc, err := rebalance.Describe(testCtx(t, 30*time.Second), op, zkcoord.Join(root, group))
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range []int64{1, 2, 3} {
				if desc.Members[i].Weight != w {
					t.Errorf("member %d: weight %d, want %d", i, desc.Members[i].Weight, w)
				}
			}

			// Weight 2 joins: 12 resources over weights 1+2+3+2 are 1.5, 3,
			// 4.5 and 3; one of the halves is rounded up.
			before := rec.stopCounts()
			clients = append(clients, start(t, connect(t), root, group, rec.handler("c3"),
				rebalance.WithMode(mode), rebalance.WithWeight(2)))
			testkit.WaitFor(t, 30*time.Second, "shares after the join", func() error {
				return owns(t, op, root, group, clients, resources, []int{2, 3, 4, 3}, []int{1, 3, 5, 3})
			})
			rec.check(t)
			if mode == rebalance.Incremental {
				after, moved := rec.stopCounts(), 0
				for _, r := range resources {
					moved += after[r] - before[r]
				}
				if moved != 3 {
					t.Errorf("join of weight 2 stopped %d resources, want 3 (the newcomer's share)", moved)
				}
			}
		})
	}
}

// TestResourceWeights: a heavy resource counts its weight.
func TestResourceWeights(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(5)
	addResources(t, op, root, group, resources...)
	heavy := rebalance.WithResourceWeights(func(r string) int64 {
		if r == resources[0] {
			return 4
		}
		return 1
	})
	rec := newRecorder()
	var clients []*rebalance.Client
	for i := range 2 {
		clients = append(clients, start(t, connect(t), root, group, rec.handler(fmt.Sprint("c", i)), heavy))
	}
	// Total 8: the heavy resource alone is one share, the four others the
	// other.
	testkit.WaitFor(t, 30*time.Second, "the heavy resource alone", func() error {
		if err := owns(t, op, root, group, clients, resources, []int{1, 4}, []int{4, 1}); err != nil {
			return err
		}
		for _, c := range clients {
			if as := c.Assignments(); len(as) == 1 && as[0].Resource != resources[0] {
				return fmt.Errorf("%s runs %s alone", c.ID(), as[0].Resource)
			}
		}
		return nil
	})
	rec.check(t)
}

// TestAllocator: a group's own allocation function decides, unbalanced as
// it may be; a result that leaves a resource out is refused before
// anything moves, reported, and the allocation in force stays; the next
// change tries again.
func TestAllocator(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(6)
	addResources(t, op, root, group, resources...)
	var broken atomic.Bool
	// Everything to the newest client, except when broken: then the last
	// resource is left out.
	f := func(in alloc.Input) (alloc.Assignment, error) {
		rs := in.Resources
		if broken.Load() {
			rs = rs[:len(rs)-1]
		}
		return alloc.Assignment{in.Clients[len(in.Clients)-1]: rs}, nil
	}
	rec := newRecorder()
	var clients []*rebalance.Client
	for i := range 2 {
		clients = append(clients, start(t, connect(t), root, group, rec.handler(fmt.Sprint("c", i)), rebalance.WithAllocator(f)))
	}
	testkit.WaitFor(t, 30*time.Second, "everything to the newest", func() error {
		return owns(t, op, root, group, clients, resources, []int{0, 6})
	})
	desc, err := rebalance.Describe(testCtx(t, 30*time.Second), op, zkcoord.Join(root, group))
	if err != nil {
		t.Fatal(err)
	}
	gen := desc.Generation

	broken.Store(true)
	addResources(t, op, root, group, "extra")
	testkit.WaitFor(t, 30*time.Second, "the refusal", func() error {
		if err := clients[0].AllocationError(); err == nil {
			return errors.New("no allocation error yet")
		}
		return nil
	})
	if err := clients[0].AllocationError(); !errors.Is(err, rebalance.ErrAllocationRefused) || !errors.Is(err, alloc.ErrInvalid) {
		t.Fatalf("AllocationError = %v, want ErrAllocationRefused and alloc.ErrInvalid", err)
	}
	if err := clients[1].AllocationError(); err != nil {
		t.Errorf("a follower reports %v", err)
	}
	desc, err = rebalance.Describe(testCtx(t, 30*time.Second), op, zkcoord.Join(root, group))
	if err != nil {
		t.Fatal(err)
	}
	if desc.Generation != gen || fmt.Sprint(desc.Unallocated) != "[extra]" || len(clients[1].Assignments()) != 6 {
		t.Fatalf("after the refusal: generation %d (was %d), unallocated %v, newest runs %d",
			desc.Generation, gen, desc.Unallocated, len(clients[1].Assignments()))
	}

	broken.Store(false)
	resources = append(resources, "extra", "more")
	addResources(t, op, root, group, "more")
	testkit.WaitFor(t, 30*time.Second, "everything to the newest again", func() error {
		return owns(t, op, root, group, clients, resources, []int{0, 8})
	})
	if err := clients[0].AllocationError(); err != nil {
		t.Errorf("AllocationError after a valid allocation: %v", err)
	}
	rec.check(t)
}

func TestWeightOption(t *testing.T) {
	for _, w := range []int64{-1, alloc.MaxWeight + 1} {
		_, err := rebalance.Start(testCtx(t, 10*time.Second), connect(t), "/g", rebalance.Handler{}, rebalance.WithWeight(w))
		if !errors.Is(err, rebalance.ErrInvalidOption) {
			t.Errorf("weight %d: %v", w, err)
		}
	}
}
