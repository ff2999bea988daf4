//go:build bench

package bench

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance"
)

// rebalanceSize is one group shape: clients × resources, with the join and
// leave pairs per round and the rounds.
type rebalanceSize struct {
	clients, resources int
	pairs, rounds      int
	// kazooRounds caps the rounds of Kazoo's SetPartitioner (0: no cap;
	// -1: not run at this size).
	kazooRounds int
	// weighted gives clients and resources weights (see weighted_test.go).
	weighted bool
}

func (s rebalanceSize) label() string {
	if s.weighted {
		return fmt.Sprintf("%dx%d-weighted", s.clients, s.resources)
	}
	return fmt.Sprintf("%dx%d", s.clients, s.resources)
}

func joinMetric(s rebalanceSize) string  { return "rebalance-join-" + s.label() }
func leaveMetric(s rebalanceSize) string { return "rebalance-leave-" + s.label() }

func rebalanceSizes(quick bool, set *setting) []rebalanceSize {
	switch {
	case quick && !set.loopback():
		return []rebalanceSize{{clients: 5, resources: 50, pairs: 1, rounds: 2}}
	case !set.loopback():
		return []rebalanceSize{{clients: 50, resources: 1000, pairs: 2, rounds: 3}}
	case quick:
		return []rebalanceSize{{clients: 5, resources: 50, pairs: 1, rounds: 2}, {clients: 10, resources: 200, pairs: 1, rounds: 1}}
	}
	return []rebalanceSize{
		{clients: 10, resources: 100, pairs: 3, rounds: 5},
		{clients: 50, resources: 1000, pairs: 2, rounds: 4},
		{clients: 200, resources: 10000, pairs: 1, rounds: 4},
		{clients: 1000, resources: 10000, pairs: 1, rounds: 3, kazooRounds: -1},
		{clients: 1000, resources: 10000, pairs: 1, rounds: 3, kazooRounds: -1, weighted: true},
	}
}

// kazooTimeBoundary is the stability window of Kazoo's SetPartitioner, in
// seconds: how long the party must be unchanged before it allocates. 0 is
// the smallest it accepts (the default is 30).
const kazooTimeBoundary = 0.0

var rebalanceModes = []rebalance.Mode{rebalance.Incremental, rebalance.ResourceBarrier, rebalance.GlobalBarrier}

// modesIn are the modes measured in a setting: all on loopback, the
// incremental one (the one with a target) in the delayed settings.
func modesIn(set *setting) []rebalance.Mode {
	if set.loopback() {
		return rebalanceModes
	}
	return rebalanceModes[:1]
}

// tracker follows who runs which resource, from the Handler calls of every
// client of one group.
type tracker struct {
	mu       sync.Mutex
	holder   map[string]string // resource -> client name
	count    map[string]int    // client name -> resources held
	live     map[string]bool
	paused   int       // Unassigned calls since reset
	last     time.Time // last Assigned call
	moved    time.Time // last Assigned or Unassigned call
	changed  chan struct{}
	failures []error
	// expect, when set, is the owner (client name) every resource must
	// have to be settled, instead of shares that differ by at most one.
	expect map[string]string
}

func newTracker() *tracker {
	return &tracker{holder: map[string]string{}, count: map[string]int{}, live: map[string]bool{}, changed: make(chan struct{}, 1)}
}

func (t *tracker) poke() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *tracker) handler(name string) rebalance.Handler {
	return rebalance.Handler{
		Assigned: func(_ context.Context, a rebalance.Assignment) error {
			t.mu.Lock()
			defer t.mu.Unlock()
			if h, ok := t.holder[a.Resource]; ok {
				t.failures = append(t.failures, fmt.Errorf("%s assigned to %s while %s runs it", a.Resource, name, h))
			}
			t.holder[a.Resource] = name
			t.count[name]++
			t.last = time.Now()
			t.moved = t.last
			t.poke()
			return nil
		},
		Unassigned: func(a rebalance.Assignment, _ error) error {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.holder[a.Resource] == name {
				delete(t.holder, a.Resource)
				t.count[name]--
			}
			t.paused++
			t.moved = time.Now()
			t.poke()
			return nil
		},
		Aborted: func(err error) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.failures = append(t.failures, fmt.Errorf("client %s aborted: %w", name, err))
			t.poke()
		},
	}
}

// settled reports whether every resource is run by a live client and the
// live clients' shares differ by at most one.
func (t *tracker) settled(resources int) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.failures) > 0 {
		return false, t.failures[0]
	}
	if len(t.holder) != resources {
		return false, nil
	}
	if t.expect != nil {
		for r, name := range t.expect {
			if t.holder[r] != name {
				return false, nil
			}
		}
		return true, nil
	}
	lo, hi := resources, 0
	for name := range t.live {
		lo, hi = min(lo, t.count[name]), max(hi, t.count[name])
	}
	for name, n := range t.count {
		if n > 0 && !t.live[name] {
			return false, nil
		}
	}
	return hi-lo <= 1, nil
}

// wait waits until settled and returns the time of the last Assigned call.
func (t *tracker) wait(ctx context.Context, resources int, limit time.Duration) (time.Time, error) {
	deadline := time.After(limit)
	for {
		ok, err := t.settled(resources)
		if err != nil {
			return time.Time{}, err
		}
		if ok {
			t.mu.Lock()
			defer t.mu.Unlock()
			return t.last, nil
		}
		select {
		case <-t.changed:
		case <-deadline:
			return time.Time{}, fmt.Errorf("not settled after %v", limit)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

func (t *tracker) setLive(name string, live bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if live {
		t.live[name] = true
	} else {
		delete(t.live, name)
	}
	t.paused = 0
}

// held returns how many resources the tracked clients run.
func (t *tracker) held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.holder)
}

// quiet reports whether no resource moved for d.
func (t *tracker) quiet(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Since(t.moved) >= d
}

// holdings returns who runs each resource.
func (t *tracker) holdings() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.holder)
}

func (t *tracker) takePaused() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.paused
}

// zkGroup is one zkcoord group of clients in one mode.
type zkGroup struct {
	size    rebalanceSize
	mode    rebalance.Mode
	group   string
	t       *tracker
	admin   *zkcoord.Session
	members []*zkcoord.Session
	clients []*rebalance.Client
	spare   *zkcoord.Session // the joining client's Session
	joiner  *rebalance.Client
	ids     map[string]string // client name -> id in the group, for weighted sizes
}

const benchRoot = "/bench/rebalance"

func (g *zkGroup) opts() []rebalance.Option {
	// Rebalance on every change, as Kazoo is given its smallest window.
	return []rebalance.Option{rebalance.WithMode(g.mode), rebalance.WithMinInterval(0)}
}

func (g *zkGroup) setup(ctx context.Context) error {
	var err error
	g.t = newTracker()
	g.group = fmt.Sprintf("%s-%s-%d", g.mode, g.size.label(), pathSeq.Add(1))
	if g.admin, err = connect(ctx); err != nil {
		return err
	}
	err = forEach(ctx, g.size.resources, 32, func(ctx context.Context, i int) error {
		return rebalance.AddResource(ctx, g.admin, zkcoord.Join(benchRoot, g.group), fmt.Sprintf("r%05d", i))
	})
	if err != nil {
		return err
	}
	if g.members, err = connectN(ctx, g.size.clients+1); err != nil {
		return err
	}
	g.spare = g.members[g.size.clients]
	g.members = g.members[:g.size.clients]
	g.clients = make([]*rebalance.Client, len(g.members))
	for i := range g.members {
		g.t.setLive(fmt.Sprintf("c%d", i), true)
	}
	err = forEach(ctx, len(g.members), 16, func(ctx context.Context, i int) error {
		c, err := rebalance.Start(ctx, g.members[i], zkcoord.Join(benchRoot, g.group), g.t.handler(fmt.Sprintf("c%d", i)), g.clientOpts(i)...)
		g.clients[i] = c
		return err
	})
	if err != nil {
		return err
	}
	if g.size.weighted {
		return g.settleWeighted(ctx)
	}
	_, err = g.t.wait(ctx, g.size.resources, 10*time.Minute)
	return err
}

// join adds one client and returns the time until every resource runs
// again, evenly shared.
func (g *zkGroup) join(ctx context.Context) (stepOut, error) {
	name := "joiner"
	g.t.setLive(name, true)
	before := g.t.holdings()
	t := time.Now()
	c, err := rebalance.Start(ctx, g.spare, zkcoord.Join(benchRoot, g.group), g.t.handler(name), g.clientOpts(-1)...)
	if err != nil {
		return stepOut{}, err
	}
	g.joiner = c
	if g.size.weighted {
		g.expectWeighted(before, name, c.ID())
	}
	last, err := g.t.wait(ctx, g.size.resources, 10*time.Minute)
	if err != nil {
		return stepOut{}, err
	}
	return stepOut{values: []float64{ms(int64(last.Sub(t)))}, ops: 1,
		extra: map[string]float64{"paused": float64(g.t.takePaused())}}, nil
}

// leave stops the client that joined last.
func (g *zkGroup) leave(ctx context.Context) (stepOut, error) {
	g.t.setLive("joiner", false)
	if g.size.weighted {
		g.expectWeighted(g.t.holdings(), "joiner", "")
	}
	t := time.Now()
	if err := g.joiner.Stop(ctx); err != nil {
		return stepOut{}, err
	}
	last, err := g.t.wait(ctx, g.size.resources, 10*time.Minute)
	if err != nil {
		return stepOut{}, err
	}
	return stepOut{values: []float64{ms(int64(last.Sub(t)))}, ops: 1,
		extra: map[string]float64{"paused": float64(g.t.takePaused())}}, nil
}

func (g *zkGroup) teardown(ctx context.Context) error {
	_ = forEach(ctx, len(g.clients), 32, func(ctx context.Context, i int) error {
		if c := g.clients[i]; c != nil {
			c.Stop(ctx)
		}
		return nil
	})
	closeAll(append(g.members, g.spare, g.admin))
	return nil
}

func rebalanceSuite(e *env, size rebalanceSize) *suite {
	s := &suite{id: e.set.metric("rebalance-" + size.label()), rounds: size.rounds}
	join, leave := e.set.metric(joinMetric(size)), e.set.metric(leaveMetric(size))
	modes := modesIn(e.set)
	if size.weighted {
		modes = modes[:1] // incremental: the sticky allocation under weights
	}
	for _, mode := range modes {
		g := &zkGroup{size: size, mode: mode}
		s.impls = append(s.impls, &impl{
			name:  "zkcoord " + mode.String(),
			setup: g.setup,
			round: func(ctx context.Context, rec *recorder) error {
				for i := 0; i < size.pairs; i++ {
					if err := rec.step(ctx, join, func() (stepOut, error) { return g.join(ctx) }); err != nil {
						return err
					}
					if err := rec.step(ctx, leave, func() (stepOut, error) { return g.leave(ctx) }); err != nil {
						return err
					}
				}
				return nil
			},
			teardown: g.teardown,
		})
	}
	if e.kazoo != nil && size.kazooRounds >= 0 {
		p := e.kazoo
		path := freshPath(kazooName, "partition")
		im := &impl{
			name:   "Kazoo SetPartitioner",
			rounds: size.kazooRounds,
			setup: func(ctx context.Context) error {
				_, err := p.call(ctx, 20*time.Minute, "part_setup", map[string]any{
					"path": path, "members": size.clients, "items": size.resources, "tb": kazooTimeBoundary})
				return err
			},
			round: func(ctx context.Context, rec *recorder) error {
				for i := 0; i < size.pairs; i++ {
					for _, st := range []struct{ metric, cmd string }{{join, "part_join"}, {leave, "part_leave"}} {
						err := rec.step(ctx, st.metric, func() (stepOut, error) {
							r, err := p.call(ctx, 20*time.Minute, st.cmd, nil)
							return r.out(), err
						})
						if err != nil {
							return err
						}
					}
				}
				return nil
			},
			teardown: func(ctx context.Context) error {
				_, err := p.call(ctx, 5*time.Minute, "part_teardown", nil)
				return err
			},
		}
		if size.kazooRounds > 0 && size.kazooRounds < size.rounds {
			im.note = fmt.Sprintf("%d round(s) instead of %d, to stay within the time budget", size.kazooRounds, size.rounds)
		}
		s.impls = append(s.impls, im)
	}
	return s
}
