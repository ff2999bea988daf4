//go:build bench

package bench

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// The weighted sizes give client i the weight 1+i%4 (the joining client
// 3) and every resource a weight from 1 to 8 taken from a hash of its id,
// so that the coordinator runs the weighted allocation with resources of
// different weights (alloc.WeightedSticky), the most work it can have.

func clientWeight(i int) int64 {
	if i < 0 {
		return 3 // the joining client
	}
	return int64(1 + i%4)
}

func resourceWeight(id string) int64 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int64(1 + h.Sum32()%8)
}

// clientOpts are the options of client i (-1: the joining client).
func (g *zkGroup) clientOpts(i int) []rebalance.Option {
	opts := g.opts()
	if g.size.weighted {
		opts = append(opts, rebalance.WithWeight(clientWeight(i)), rebalance.WithResourceWeights(resourceWeight))
	}
	return opts
}

// expectWeighted makes the tracker wait for the allocation the coordinator
// computes from the holdings before (taken while settled, when they are
// the allocation in force) once name joins with id (or, with id "",
// leaves): the same function of the same inputs, since weights are fixed.
func (g *zkGroup) expectWeighted(before map[string]string, name, id string) {
	if g.ids == nil {
		g.ids = map[string]string{}
		for i, c := range g.clients {
			g.ids[fmt.Sprintf("c%d", i)] = c.ID()
		}
	}
	if id == "" {
		delete(g.ids, name)
	} else {
		g.ids[name] = id
	}
	names := map[string]string{}
	var ids []string
	cw, rw := alloc.Weights{}, alloc.Weights{}
	for n, id := range g.ids {
		names[id] = n
		ids = append(ids, id)
		cw[id] = g.weightOf(n)
	}
	resources := make([]string, g.size.resources)
	for i := range resources {
		resources[i] = fmt.Sprintf("r%05d", i)
		rw[resources[i]] = resourceWeight(resources[i])
	}
	prev := alloc.Assignment{}
	for r, n := range before {
		if id, ok := g.ids[n]; ok {
			prev[id] = append(prev[id], r)
		}
	}
	next := alloc.WeightedSticky(prev, ids, cw, resources, rw)
	expect := make(map[string]string, len(resources))
	for id, rs := range next {
		for _, r := range rs {
			expect[r] = names[id]
		}
	}
	g.t.mu.Lock()
	g.t.expect = expect
	g.t.mu.Unlock()
	g.t.poke()
}

func (g *zkGroup) weightOf(name string) int64 {
	var i int
	if _, err := fmt.Sscanf(name, "c%d", &i); err != nil {
		return clientWeight(-1)
	}
	return clientWeight(i)
}

// settleWeighted waits, after the set-up's joins, until every resource
// runs and nothing has moved for a while, then until the holdings are the
// allocation the coordinator computes from them (a fixed point of it).
func (g *zkGroup) settleWeighted(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if g.t.held() == g.size.resources && g.t.quiet(time.Second) {
			g.expectWeighted(g.t.holdings(), "c0", g.clients[0].ID())
			if ok, err := g.t.settled(g.size.resources); err != nil || ok {
				return err
			}
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("weighted group not settled after 10 minutes")
}
