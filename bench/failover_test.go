//go:build bench

package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/fifo"
)

// failoverMetric names the failover metric for n candidates.
func failoverMetric(n int) string { return fmt.Sprintf("failover-%d", n) }

// electionSessions is how many ZooKeeper sessions the candidates of every
// implementation share (candidate i uses session i mod electionSessions).
const electionSessions = 10

// failoverSizes returns the candidate counts and, per count, the leader
// changes per round and the rounds.
type failoverSize struct{ n, changes, rounds int }

func failoverSizes(quick bool, set *setting) []failoverSize {
	switch {
	case quick && !set.loopback():
		return []failoverSize{{10, 3, 2}}
	case quick:
		return []failoverSize{{10, 3, 2}, {50, 3, 2}}
	case !set.loopback():
		return []failoverSize{{10, 5, 8}}
	}
	return []failoverSize{{10, 5, 10}, {100, 20, 8}, {1000, 20, 6}}
}

// zkElection runs n zkcoord candidates over a few Sessions.
type zkElection struct {
	sessions  []*zkcoord.Session
	elections []*election.Election
	path      string

	mu     sync.Mutex
	placed map[string]bool // nodes whose first place is known
	count  int             // candidates started so far

	placedCh chan struct{}             // one per candidate placed
	leaders  chan *election.Leadership // in the order they were won
	elected  chan electedAt
	notified atomic.Int64 // determinations caused by a watch notification
	leader   string

	notifiedMu sync.Mutex
	notifiedAt map[string]time.Time // node -> its last notified determination

	stopEvents func() // ends the reading of the candidates' events
}

type electedAt struct {
	node string
	at   time.Time
}

func (z *zkElection) setup(ctx context.Context, n int) error {
	var err error
	z.placed = map[string]bool{}
	z.placedCh = make(chan struct{}, 1<<16)
	z.leaders = make(chan *election.Leadership, 1<<16)
	z.elected = make(chan electedAt, 1<<16)
	z.notifiedAt = map[string]time.Time{}
	z.path = freshPath(zkcoordName, "election")
	if z.sessions, err = connectN(ctx, min(n, electionSessions)); err != nil {
		return err
	}
	events, stop := fifo.Relay(1<<10, func(ev election.Event) {
		if ev.Type == election.EventElected || ev.Type == election.EventFollowing {
			z.mu.Lock()
			first := !z.placed[ev.Node]
			z.placed[ev.Node] = true
			z.mu.Unlock()
			if first {
				z.placedCh <- struct{}{}
			}
		}
		switch {
		case ev.Type == election.EventElected:
			z.elected <- electedAt{ev.Node, ev.At}
		case ev.Type == election.EventDetermine && ev.Notified:
			z.notified.Add(1)
			z.notifiedMu.Lock()
			z.notifiedAt[ev.Node] = ev.At
			z.notifiedMu.Unlock()
		}
	})
	z.stopEvents = stop
	for i, s := range z.sessions {
		e, err := election.New(s, z.path, election.WithID(fmt.Sprintf("s%d", i)), election.WithEvents(events))
		if err != nil {
			return err
		}
		z.elections = append(z.elections, e)
	}
	if err := z.campaign(ctx, n); err != nil {
		return err
	}
	select {
	case ev := <-z.elected:
		z.leader = ev.node
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// campaign adds k candidates, each campaigning on a goroutine of its own
// until its Session is closed, and waits until each knows its place.
func (z *zkElection) campaign(ctx context.Context, k int) error {
	z.mu.Lock()
	base := z.count
	z.count += k
	z.mu.Unlock()
	for i := range k {
		e := z.elections[(base+i)%len(z.elections)]
		go func() {
			if l, err := e.Campaign(context.Background()); err == nil {
				z.leaders <- l
			}
		}()
	}
	for range k {
		select {
		case <-z.placedCh:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// failover makes the leader resign, changes times, and returns the time
// from each Resign call to the successor's election.
func (z *zkElection) failover(ctx context.Context, changes int) (stepOut, error) {
	before := z.notified.Load()
	var out, work []float64
	for i := 0; i < changes; i++ {
		var l *election.Leadership
		select {
		case l = <-z.leaders:
		case <-ctx.Done():
			return stepOut{}, ctx.Err()
		}
		if l.Node() != z.leader {
			return stepOut{}, fmt.Errorf("leader %s won, %s elected", l.Node(), z.leader)
		}
		t := time.Now()
		if err := l.Resign(ctx); err != nil {
			return stepOut{}, err
		}
		select {
		case ev := <-z.elected:
			out = append(out, ms(int64(ev.at.Sub(t))))
			z.leader = ev.node
			z.notifiedMu.Lock()
			if n, ok := z.notifiedAt[ev.node]; ok && !n.Before(t) {
				work = append(work, ms(int64(ev.at.Sub(n))))
			}
			z.notifiedMu.Unlock()
		case <-time.After(time.Minute):
			return stepOut{}, fmt.Errorf("no new leader within a minute")
		case <-ctx.Done():
			return stepOut{}, ctx.Err()
		}
	}
	woken := float64(z.notified.Load()-before) / float64(changes)
	extra := map[string]float64{"woken_per_change": woken}
	if len(work) > 0 {
		extra["work_ms"] = median(work)
	}
	return stepOut{values: out, extra: extra}, nil
}

// teardown closes the Sessions, which ends every candidate at once
// (resigning them one by one would elect each of them in turn).
func (z *zkElection) teardown(context.Context) error {
	closeAll(z.sessions)
	if z.stopEvents != nil {
		z.stopEvents() // the channels it reads have room: it never waits
	}
	return nil
}

func failoverSuite(e *env, sz failoverSize) *suite {
	metric := e.set.metric(failoverMetric(sz.n))
	s := &suite{id: metric, rounds: sz.rounds}
	z := &zkElection{}
	s.impls = append(s.impls, &impl{
		name:  zkcoordName,
		setup: func(ctx context.Context) error { return z.setup(ctx, sz.n) },
		round: func(ctx context.Context, rec *recorder) error {
			err := rec.step(ctx, metric, func() (stepOut, error) { return z.failover(ctx, sz.changes) })
			if err != nil {
				return err
			}
			return z.campaign(ctx, sz.changes)
		},
		teardown: z.teardown,
	})
	type cmds struct{ setup, failover, refill, teardown string }
	for _, p := range e.peers() {
		c := cmds{"latch_setup", "latch_failover", "latch_refill", "latch_teardown"}
		if p.name == kazooName {
			c = cmds{"elect_setup", "elect_failover", "elect_refill", "elect_teardown"}
		}
		path := freshPath(p.name, "election")
		s.impls = append(s.impls, &impl{
			name: p.name,
			setup: func(ctx context.Context) error {
				_, err := p.call(ctx, 10*time.Minute, c.setup,
					map[string]any{"path": path, "n": sz.n, "sessions": min(sz.n, electionSessions)})
				return err
			},
			round: func(ctx context.Context, rec *recorder) error {
				err := rec.step(ctx, metric, func() (stepOut, error) {
					r, err := p.call(ctx, 10*time.Minute, c.failover, map[string]any{"changes": sz.changes})
					return r.out(), err
				})
				if err != nil {
					return err
				}
				_, err = p.call(ctx, 10*time.Minute, c.refill, nil)
				return err
			},
			teardown: func(ctx context.Context) error {
				_, err := p.call(ctx, 10*time.Minute, c.teardown, nil)
				return err
			},
		})
	}
	return s
}
