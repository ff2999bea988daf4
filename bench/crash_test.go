//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance"
)

// The crash suites kill a process with SIGKILL, as a crash or an OOM kill
// would, and time until another process acts in its place. Every
// participant is a process of its own (the zkcoord ones are this test
// binary re-executed, see TestGoPeer) with its own proxy, and asks for
// the session timeout under test.

// crashDelay is the setting the crash suites run in.
const crashDelay = time.Millisecond

// Metric ids of the crash suites (with the setting appended).
func crashMetric(what string, timeout time.Duration) string {
	return fmt.Sprintf("crash-%s-%gs", what, timeout.Seconds())
}

// crashTimeouts are the session timeouts under test, and the kills per
// implementation at each.
type crashTimeout struct {
	timeout time.Duration
	kills   int
}

func crashTimeouts(quick bool) []crashTimeout {
	if quick {
		return []crashTimeout{{4 * time.Second, 2}}
	}
	return []crashTimeout{{4 * time.Second, 8}, {10 * time.Second, 5}}
}

// crashRebalanceSize is the group of the rebalancing crash suite: the
// killed member is one of these clients.
var crashRebalanceSize = rebalanceSize{clients: 10, resources: 100}

// A crashKind is how one implementation takes part in a crash suite.
type crashKind struct {
	name  string
	start func(ctx context.Context) (*peer, error) // a fresh process
	kind  string                                   // its crash_join kind
	dir   func(path string) string                 // where its participants' nodes live
}

func sameDir(path string) string { return path }

func startGoPeer(ctx context.Context) (*peer, error) {
	connect, err := peerConnect()
	if err != nil {
		return nil, err
	}
	return startPeerEnv(ctx, []string{goPeerEnv + "=" + connect}, zkcoordName, os.Args[0], "-test.run=^TestGoPeer$", "-test.count=1")
}

func crashSuites(e *env) []*suite {
	var out []*suite
	var curator func(ctx context.Context) (*peer, error)
	if e.javaDir != "" {
		curator = func(ctx context.Context) (*peer, error) { return startCurator(ctx, e.javaDir) }
	}
	for _, ct := range crashTimeouts(e.quick) {
		leaders := []crashKind{
			{zkcoordName + " election", startGoPeer, "election", sameDir},
			{zkcoordName + " failover", startGoPeer, "failover", func(p string) string { return zkcoord.Join(p, "lock") }},
			{curatorName + " LeaderLatch", curator, "latch", sameDir},
			{kazooName + " Election", startKazoo, "elect", sameDir},
		}
		locks := []crashKind{
			{zkcoordName, startGoPeer, "lock", sameDir},
			{curatorName, curator, "lock", sameDir},
			{kazooName, startKazoo, "lock", sameDir},
		}
		out = append(out, chainSuite(e, crashMetric("leader", ct.timeout), ct, leaders))
		// Locks and rebalancing at the first timeout only: they wait on the
		// same expiry, and the time budget is spent on the elections.
		if ct.timeout == crashTimeouts(e.quick)[0].timeout {
			out = append(out, chainSuite(e, crashMetric("lock", ct.timeout), ct, locks), crashRebalanceSuite(e, ct))
		}
	}
	return out
}

// A chain is one implementation's line of processes: the one acting
// (leader, lock holder) and the next in line. Each kill makes the next
// one act and a fresh process joins behind it.
type chain struct {
	k        crashKind
	ct       crashTimeout
	path     string
	observer *zk.Conn // straight to the servers: sees the expiry at once
	cur, nxt *peer
}

func (c *chain) join(ctx context.Context) (*peer, error) {
	p, err := c.k.start(ctx)
	if err != nil {
		return nil, err
	}
	_, err = p.call(ctx, 2*time.Minute, "crash_join",
		map[string]any{"kind": c.k.kind, "path": c.path, "session_ms": c.ct.timeout.Milliseconds()})
	if err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// waitJoined waits until n participants have their nodes.
func (c *chain) waitJoined(ctx context.Context, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		kids, _, err := c.observer.Children(c.k.dir(c.path))
		if err == nil && len(kids) >= n {
			return nil
		}
		if err != nil && err != zk.ErrNoNode {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d participants after 2 minutes", len(kids), n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (c *chain) setup(ctx context.Context) error {
	var err error
	if c.observer, err = connectDirect(ctx); err != nil {
		return err
	}
	if c.cur, err = c.join(ctx); err != nil {
		return err
	}
	if _, err := c.cur.call(ctx, 2*time.Minute, "crash_await", nil); err != nil {
		return err
	}
	if c.nxt, err = c.join(ctx); err != nil {
		return err
	}
	return c.waitJoined(ctx, 2)
}

// kill kills the acting process and returns the time until the next one
// acts, with its parts: until the server expired the session (seen by
// the observer), and from then on (the notification and the successor's
// work).
func (c *chain) kill(ctx context.Context) (stepOut, error) {
	_, _, watch, err := c.observer.ChildrenW(c.k.dir(c.path))
	if err != nil {
		return stepOut{}, err
	}
	type await struct {
		r   peerReply
		err error
	}
	acted := make(chan await, 1)
	go func() {
		r, err := c.nxt.call(ctx, 10*time.Minute, "crash_await", nil)
		acted <- await{r, err}
	}()
	expired := seen(watch)
	t0 := time.Now()
	c.cur.kill()
	a := <-acted
	if a.err != nil {
		return stepOut{}, a.err
	}
	tExp, err := expired()
	if err != nil {
		return stepOut{}, err
	}
	at := time.UnixMicro(int64(a.r.Extra["at_us"]))
	extra := map[string]float64{
		"expiry_ms": ms(int64(tExp.Sub(t0))),
		"after_ms":  ms(int64(at.Sub(tExp))),
	}
	if n, ok := a.r.Extra["notified_us"]; ok {
		extra["work_ms"] = ms(int64(at.Sub(time.UnixMicro(int64(n)))))
	}
	return stepOut{values: []float64{ms(int64(at.Sub(t0)))}, ops: 1, extra: extra}, nil
}

// seen returns a function that waits (a minute at most) for the watch to
// fire and returns when it did.
func seen(watch <-chan zk.Event) func() (time.Time, error) {
	fired := make(chan time.Time, 1)
	go func() {
		<-watch
		fired <- time.Now()
	}()
	return func() (time.Time, error) {
		select {
		case t := <-fired:
			return t, nil
		case <-time.After(time.Minute):
			return time.Time{}, fmt.Errorf("no expiry seen within a minute")
		}
	}
}

// expiryStep kills p and waits for settle, which returns when the others
// took over; the expiry is when observer saw the children of dir change.
func expiryStep(observer *zk.Conn, dir string, p *peer, settle func() (time.Time, error)) (stepOut, error) {
	_, _, watch, err := observer.ChildrenW(dir)
	if err != nil {
		return stepOut{}, err
	}
	expired := seen(watch)
	t0 := time.Now()
	p.kill()
	at, err := settle()
	if err != nil {
		return stepOut{}, err
	}
	tExp, err := expired()
	if err != nil {
		return stepOut{}, err
	}
	return stepOut{values: []float64{ms(int64(at.Sub(t0)))}, ops: 1, extra: map[string]float64{
		"expiry_ms": ms(int64(tExp.Sub(t0))),
		"after_ms":  ms(int64(at.Sub(tExp))),
	}}, nil
}

// next moves the chain on: the one that acts now is next to be killed,
// and a fresh process queues behind it.
func (c *chain) next(ctx context.Context) error {
	c.cur = c.nxt
	var err error
	if c.nxt, err = c.join(ctx); err != nil {
		return err
	}
	return c.waitJoined(ctx, 2)
}

func (c *chain) teardown(context.Context) error {
	for _, p := range []*peer{c.cur, c.nxt} {
		if p != nil {
			p.kill()
		}
	}
	if c.observer != nil {
		c.observer.Close()
	}
	return nil
}

func chainSuite(e *env, base string, ct crashTimeout, kinds []crashKind) *suite {
	metric := e.set.metric(base)
	s := &suite{id: metric, rounds: ct.kills, warm: -1}
	for _, k := range kinds {
		if k.start == nil {
			continue // the Curator peer did not compile
		}
		c := &chain{k: k, ct: ct, path: freshPath(k.name, base)}
		s.impls = append(s.impls, &impl{
			name:  k.name,
			setup: c.setup,
			round: func(ctx context.Context, rec *recorder) error {
				if err := rec.step(ctx, metric, func() (stepOut, error) { return c.kill(ctx) }); err != nil {
					return err
				}
				return c.next(ctx)
			},
			teardown: c.teardown,
		})
	}
	return s
}

// connectDirect opens a go-zookeeper connection straight to the servers,
// bypassing any proxy.
func connectDirect(ctx context.Context) (*zk.Conn, error) {
	saved := active
	defer activate(saved)
	activate(&setting{cluster: server})
	return connectRaw(ctx)
}

// crashRebalanceSuite kills one member of a rebalancing group and times
// until its resources run elsewhere, evenly shared again.
func crashRebalanceSuite(e *env, ct crashTimeout) *suite {
	size := crashRebalanceSize
	metric := e.set.metric(crashMetric("rebalance", ct.timeout))
	s := &suite{id: metric, rounds: ct.kills, warm: -1}
	// zkcoord: clients-1 members in this process, the one killed in a
	// process of its own.
	g := &zkGroup{size: rebalanceSize{clients: size.clients - 1, resources: size.resources}, mode: rebalance.Incremental}
	// One client straight to the servers sees the expiries.
	var observer *zk.Conn
	s.impls = append(s.impls, &impl{
		name: zkcoordName,
		setup: func(ctx context.Context) (err error) {
			if observer, err = connectDirect(ctx); err != nil {
				return err
			}
			return g.setup(ctx)
		},
		round: func(ctx context.Context, rec *recorder) error {
			p, err := startGoPeer(ctx)
			if err != nil {
				return err
			}
			defer p.kill()
			_, err = p.call(ctx, 2*time.Minute, "crash_join",
				map[string]any{"kind": "rebalance", "path": g.group + "@" + benchRoot, "session_ms": ct.timeout.Milliseconds()})
			if err != nil {
				return err
			}
			// Wait until the newcomer holds its share and the group
			// holds the rest.
			deadline := time.Now().Add(2 * time.Minute)
			for {
				r, err := p.call(ctx, time.Minute, "crash_held", nil)
				if err != nil {
					return err
				}
				held := int(r.Extra["held"])
				if held > 0 && held+g.t.held() == size.resources && g.t.quiet(200*time.Millisecond) {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("newcomer holds %d, the group %d of %d after 2 minutes", held, g.t.held(), size.resources)
				}
				time.Sleep(20 * time.Millisecond)
			}
			return rec.step(ctx, metric, func() (stepOut, error) {
				return expiryStep(observer, zkcoord.Join(benchRoot, g.group, "clients"), p, func() (time.Time, error) {
					return g.t.wait(ctx, size.resources, 5*time.Minute)
				})
			})
		},
		teardown: func(ctx context.Context) error {
			observer.Close()
			return g.teardown(ctx)
		},
	})
	if e.kazoo != nil {
		path := freshPath(kazooName, "crash-partition")
		s.impls = append(s.impls, &impl{
			name: "Kazoo SetPartitioner",
			setup: func(ctx context.Context) error {
				if observer == nil {
					var err error
					if observer, err = connectDirect(ctx); err != nil {
						return err
					}
				}
				_, err := e.kazoo.call(ctx, 20*time.Minute, "part_setup", map[string]any{
					"path": path, "members": size.clients - 1, "items": size.resources, "tb": kazooTimeBoundary})
				return err
			},
			round: func(ctx context.Context, rec *recorder) error {
				p, err := startKazoo(ctx)
				if err != nil {
					return err
				}
				defer p.kill()
				_, err = p.call(ctx, 2*time.Minute, "crash_join", map[string]any{"kind": "part", "path": path,
					"items": size.resources, "tb": kazooTimeBoundary, "session_ms": ct.timeout.Milliseconds()})
				if err != nil {
					return err
				}
				r, err := p.call(ctx, 5*time.Minute, "crash_await", nil)
				if err != nil {
					return err
				}
				if _, err := e.kazoo.call(ctx, 5*time.Minute, "part_wait_external", map[string]any{"held": int(r.Extra["held"])}); err != nil {
					return err
				}
				return rec.step(ctx, metric, func() (stepOut, error) {
					// SetPartitioner's party lives in <path>/party.
					return expiryStep(observer, path+"/party", p, func() (time.Time, error) {
						r, err := e.kazoo.call(ctx, 10*time.Minute, "part_settle", nil)
						return time.UnixMicro(int64(r.Extra["at_us"])), err
					})
				})
			},
			teardown: func(ctx context.Context) error {
				_, err := e.kazoo.call(ctx, 5*time.Minute, "part_teardown", nil)
				return err
			},
		})
	}
	return s
}

// crashDefs describes the crash metrics.
func crashDefs(quick bool) []metricDef {
	var defs []metricDef
	for i, ct := range crashTimeouts(quick) {
		sto := fmt.Sprintf("%g s", ct.timeout.Seconds())
		defs = append(defs,
			metricDef{id: crashMetric("leader", ct.timeout), unit: "ms", chart: true,
				title:  "Crash failover: the leader's process killed, session timeout " + sto,
				extras: []string{"expiry_ms", "after_ms", "work_ms"},
				what: "Two processes take part, each with its own session (timeout " + sto + ") and proxy: the leader and the next " +
					"candidate. The leader's process gets SIGKILL; a sample is the time from the kill until the other process acts as " +
					"leader (zkcoord election: Campaign returns; zkcoord failover: the active function starts, after the fencing " +
					"function (which returns at once) and the breadcrumb write; Curator: isLeader; Kazoo: the Election's function " +
					"is called). Then a fresh process queues behind the new leader, and so on (a Curator process first lists the " +
					"election 300 times, so that its JVM has compiled the request path, as a long-running standby's has). Expiry: when a client connected " +
					"straight to the servers saw the leader's node go; after expiry: the rest (the notification and the successor's " +
					"work); successor's work: from the notification zkcoord's candidate received to Campaign's return. The server " +
					"expires a session one timeout after the last request or ping it had from the client, and an idle client pings " +
					"every third of the timeout or so, so the expiry comes between about two thirds of the timeout and the timeout " +
					"after the kill (plus up to one tick, 100 ms): the part after the expiry is the one the implementations control."})
		if i == 0 {
			defs = append(defs, metricDef{id: crashMetric("lock", ct.timeout), unit: "ms", chart: true,
				title:  "Crash failover: the lock holder's process killed, session timeout " + sto,
				extras: []string{"expiry_ms", "after_ms"},
				what: "As above with a lock: the holder's process gets SIGKILL while another process waits in Lock (Curator: " +
					"InterProcessMutex.acquire; Kazoo: Lock.acquire); a sample is the time until the waiter holds the lock."})
			defs = append(defs, metricDef{id: crashMetric("rebalance", ct.timeout), unit: "ms", chart: true,
				title:  "Crash of a rebalancing member, session timeout " + sto,
				extras: []string{"expiry_ms", "after_ms"},
				what: fmt.Sprintf("%d clients share %d resources; one of them runs in a process of its own (session timeout %s) "+
					"and gets SIGKILL once the group has settled. A sample is the time from the kill until every resource runs "+
					"again, evenly shared among the others (zkcoord incremental mode; Kazoo SetPartitioner, time_boundary=%g).",
					crashRebalanceSize.clients, crashRebalanceSize.resources, sto, kazooTimeBoundary)})
		}
	}
	return defs
}
