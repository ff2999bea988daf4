package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/fanout"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/zktest"
)

// harness is one run. Everything but the sinks (which feed hist, track and
// the line waiters from the processes' reader goroutines) runs on the
// goroutine of Run.
type harness struct {
	ctx     context.Context
	o       Options
	zk      *zktest.Cluster
	proxies []*zktest.Proxy // of every client made, closed at the end of the run
	hist    *oracle.History
	track   *tracker
	queue   *queueTracker     // queue workload only
	counter *counterTracker   // counter workload only
	disc    *discoveryTracker // discovery workload only
	procs   launch.Group

	dir     string // logs
	sockDir string
	socket  string
	root    string
	t0      int64

	service  *launch.Proc
	svcLines *lineWaiter
	op       *zkcoord.Session

	mu           sync.Mutex         // guards clients and proxies, touched by concurrent starts and stops
	clients      map[string]*client // live ones
	nextClient   int
	resources    []string
	nextResource int

	records  []FaultRecord
	spans    []Span
	problems oracle.Problems
}

// client is one client of the run. Its name survives restarts.
type client struct {
	name     string
	proxy    *zktest.Proxy
	bug      string
	proc     *launch.Proc
	expected bool // the harness ended proc on purpose
	lines    *lineWaiter
}

// lineWaiter keeps the non-event lines of a process and lets the harness
// wait for one. It is safe for concurrent use.
type lineWaiter struct {
	mu    sync.Mutex
	seen  map[string]bool
	added chan struct{}
}

func newLineWaiter() *lineWaiter {
	return &lineWaiter{seen: map[string]bool{}, added: make(chan struct{})}
}

func (w *lineWaiter) add(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen[line] = true
	close(w.added)
	w.added = make(chan struct{})
}

// wait waits until line was seen, done closes, or d passes.
func (w *lineWaiter) wait(line string, done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		w.mu.Lock()
		ok, added := w.seen[line], w.added
		w.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-added:
		case <-done:
			return w.has(line)
		case <-t.C:
			return false
		}
	}
}

func (w *lineWaiter) has(line string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[line]
}

// Run runs one chaos run against the ensemble zk (use StartCluster, or
// zktest.Start in a test): it starts the fenced resource service and the
// clients, injects the faults, waits for convergence after each, checks the
// final state and the whole history, and returns the report. An error means
// the run could not be carried out (bad options, a process that would not
// start); a run that found problems returns a report that does not pass.
// Cancelling ctx ends the run early (and makes it fail).
func Run(ctx context.Context, zk *zktest.Cluster, o Options) (*Report, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	if o.Spawn == nil {
		return nil, fmt.Errorf("%w: no Spawn function", ErrInvalidOptions)
	}
	h := &harness{ctx: ctx, o: o, zk: zk, hist: &oracle.History{}, track: newTracker(),
		svcLines: newLineWaiter(), clients: map[string]*client{}, t0: event.Now(),
		root: fmt.Sprintf("/chaos/%s-%d-%d", o.Workload, o.Seed, time.Now().UnixNano())}
	defer h.closeProxies()
	defer h.procs.Close()
	var err error
	if h.sockDir, err = os.MkdirTemp("", "chaos-sock-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(h.sockDir)
	h.socket = filepath.Join(h.sockDir, "service.sock")
	h.dir = o.Dir
	if h.dir == "" {
		if h.dir, err = os.MkdirTemp("", "chaos-logs-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(h.dir)
	}
	if err := os.MkdirAll(filepath.Join(h.dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if h.op != nil {
			h.op.Close(context.Background())
		}
	}()
	if o.Workload == CLI {
		return runCLI(h)
	}
	if o.Workload == Queue {
		h.queue = newQueueTracker()
	}
	if o.Workload == Counter {
		h.counter = newCounterTracker()
	}
	if o.Workload == Discovery {
		h.disc = newDiscoveryTracker()
	}
	if err := h.setup(); err != nil {
		return nil, err
	}
	if h.queue != nil {
		stop := h.startProducer()
		h.faults()
		stop()
	} else {
		h.faults()
	}
	final := h.finish()
	if h.counter != nil {
		h.readCounterState()
	}
	return h.report(final), nil
}

func (h *harness) logf(format string, args ...any) {
	if h.o.Log == nil {
		return
	}
	el := time.Duration(event.Now() - h.t0).Round(100 * time.Millisecond)
	fmt.Fprintf(h.o.Log, "[%8s] %s\n", el, fmt.Sprintf(format, args...))
}

func (h *harness) problem(format string, args ...any) {
	msg := h.problems.Addf(format, args...)
	h.logf("PROBLEM: %s", msg)
	h.hist.Mark(event.Note, "harness", "problem: "+msg)
}

// record adds an event to the history and the tracker.
func (h *harness) record(e event.Event) {
	if e.At == 0 {
		e.At = event.Now()
	}
	h.hist.Add(e)
	h.track.observe(e)
	if h.queue != nil {
		h.queue.observe(e)
	}
	if h.counter != nil {
		h.counter.observe(e)
	}
	if h.disc != nil {
		h.disc.observe(e)
	}
}

// startService starts the fenced service and waits until it is ready.
func (h *harness) startService() error {
	svc, err := h.procs.Start(h.ctx, h.o.Spawn("service", RoleService, []string{"-socket", h.socket}),
		event.Sink("service", h.record, h.svcLines.add))
	if err != nil {
		return fmt.Errorf("chaos: start the service: %w", err)
	}
	h.service = svc
	if !h.svcLines.wait("ready", svc.Done(), time.Minute) {
		return fmt.Errorf("chaos: the service did not start: %v\n%s", svc.ExitErr(), svc.Stderr())
	}
	return nil
}

// setup starts the service and the initial clients and resources, and
// waits until the group has converged.
func (h *harness) setup() error {
	if err := h.startService(); err != nil {
		return err
	}
	for range h.o.Resources {
		if err := h.addResource(); err != nil {
			return err
		}
	}
	// Start the clients together: each needs a second or two.
	clients := make([]*client, h.o.Clients)
	for i := range clients {
		c, err := h.newClient()
		if err != nil {
			return err
		}
		clients[i] = c
	}
	errs := make([]error, len(clients))
	fanout.Each(len(clients), len(clients), func(i int) { errs[i] = h.startClient(clients[i]) })
	if err := errors.Join(errs...); err != nil {
		return err
	}
	h.logf("started %s: %d clients, %d resources, ZooKeeper %s, root %s", h.o.Workload, len(h.clients),
		len(h.resources), h.zk.ConnectString(), h.root)
	at, ok, why := h.converge(event.Now(), h.stable(), h.o.ConvergeTimeout)
	if !ok {
		return fmt.Errorf("chaos: the group did not converge at the start: %s", why)
	}
	h.logf("converged at start after %v", time.Duration(at-h.t0).Round(time.Millisecond))
	return nil
}

func (h *harness) stable() time.Duration {
	if h.o.Workload.rebalance() {
		return h.o.Stable
	}
	return 0
}

// live returns the names of the live clients, sorted.
func (h *harness) live() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.SortedFunc(maps.Keys(h.clients), compareNames)
}

// everyLive reports whether every live client has done its part since
// since, and when the last of them did: done returns when client c did,
// or false if it has not yet. why is notYet followed by the clients that
// have not.
func (h *harness) everyLive(since int64, notYet string, done func(c string) (int64, bool)) (ok bool, at int64, why string) {
	at = since
	var waiting []string
	for _, c := range h.live() {
		when, ok := done(c)
		if !ok {
			waiting = append(waiting, c)
			continue
		}
		at = max(at, when)
	}
	if len(waiting) > 0 {
		return false, 0, notYet + strings.Join(waiting, ", ")
	}
	return true, at, ""
}

// compareNames orders c2 before c10.
func compareNames(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// newClient creates the next client (with its proxy) without starting it.
func (h *harness) newClient() (*client, error) {
	h.nextClient++
	c := &client{name: clientName(h.nextClient)}
	if slices.Contains(h.o.BugClients, c.name) {
		c.bug = h.o.Bug
	}
	p, err := h.zk.OpenProxy()
	if err != nil {
		return nil, fmt.Errorf("chaos: proxy for %s: %w", c.name, err)
	}
	c.proxy = p
	h.mu.Lock()
	h.proxies = append(h.proxies, p)
	h.mu.Unlock()
	return c, nil
}

// closeProxies closes the proxy of every client made during the run.
func (h *harness) closeProxies() {
	h.mu.Lock()
	ps := h.proxies
	h.proxies = nil
	h.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
}

// startClient starts c's process, waits until it has joined, and adds it to
// the live clients. Setup runs several at once.
func (h *harness) startClient(c *client) error {
	f := clientFlags{workload: h.o.Workload, name: c.name, servers: c.proxy.Servers(), socket: h.socket,
		root: h.root, resources: slices.Clone(h.resources), timeout: h.o.SessionTimeout,
		lostAfter: h.o.LostAfter, useInterval: h.o.UseInterval, seed: h.o.Seed, bug: c.bug, lockDelay: h.o.LockDelay}
	args := clientArgs(f, filepath.Join(h.dir, "logs", c.name+".log"))
	c.lines = newLineWaiter()
	p, err := h.procs.Start(h.ctx, h.o.Spawn(c.name, RoleClient, args), event.Sink(c.name, h.record, c.lines.add))
	if err != nil {
		return fmt.Errorf("chaos: start %s: %w", c.name, err)
	}
	c.proc, c.expected = p, false
	if !c.lines.wait("ready", p.Done(), 2*time.Minute) {
		return fmt.Errorf("chaos: %s did not join: %v\n%s", c.name, p.ExitErr(), tail(p.Stderr(), 4000))
	}
	if !h.svcLines.wait(fmt.Sprintf("hello %s %d", c.name, p.Pid()), p.Done(), time.Minute) {
		return fmt.Errorf("chaos: %s did not reach the service", c.name)
	}
	h.mark(event.Note, c.name, fmt.Sprintf("started (pid %d)", p.Pid()))
	h.addLive(c)
	return nil
}

func (h *harness) addLive(c *client) {
	h.mu.Lock()
	h.clients[c.name] = c
	h.mu.Unlock()
}

func (h *harness) mark(kind event.Kind, client, detail string) {
	h.record(event.Event{Kind: kind, Client: client, Detail: detail})
}

// gone waits until the service has decided every use c's dead process sent
// (its connection closed), then records how it ended.
func (h *harness) gone(c *client, kind event.Kind, detail string) {
	line := fmt.Sprintf("closed %s %d", c.name, c.proc.Pid())
	if !h.svcLines.wait(line, h.service.Done(), 30*time.Second) {
		h.problem("the service did not see %s's connection close", c.name)
	}
	h.record(event.Event{Client: c.name, Kind: kind, Detail: detail})
}

// checkClients looks for client processes that ended on their own: each is a
// problem (the library gave up); the client is restarted so the run goes
// on.
func (h *harness) checkClients() {
	for _, name := range h.live() {
		c := h.clients[name]
		if c.expected || !c.proc.Exited() {
			continue
		}
		h.problem("%s exited on its own: %v; stderr:\n%s", c.name, c.proc.ExitErr(), tail(c.proc.Stderr(), 2000))
		h.gone(c, event.Crash, "exited on its own")
		if err := h.startClient(c); err != nil {
			h.problem("restarting %s: %v", c.name, err)
			delete(h.clients, c.name)
		}
	}
}

// converge waits until the group has settled after a fault that ended at
// since, and stays so for stable (no holding changes); it returns when it
// settled.
func (h *harness) converge(since int64, stable, limit time.Duration) (at int64, ok bool, why string) {
	deadline := time.Now().Add(limit)
	for {
		h.checkClients()
		switch {
		case h.queue != nil:
			ok, at, why = h.settleQueue(since)
		case h.counter != nil:
			ok, at, why = h.settleCounter(since)
		case h.disc != nil:
			ok, at, why = h.settleDiscovery(since)
		default:
			ok, at, why = settled(h.o.Workload, h.track, h.live(), h.resources, since)
		}
		if ok && stable > 0 {
			n, _ := h.track.changeCount()
			h.sleep(stable)
			h.checkClients()
			if m, _ := h.track.changeCount(); m != n {
				ok, why = false, "still changing"
			}
		}
		if ok {
			return at, true, ""
		}
		if time.Now().After(deadline) || h.ctx.Err() != nil {
			return 0, false, why
		}
		h.sleep(pollEvery)
	}
}

// sleep waits d, or less if the run is cancelled.
func (h *harness) sleep(d time.Duration) { delay.Sleep(h.ctx, d, nil) }

// operator returns a Session for the operator's actions, opening a new one
// after a loss.
func (h *harness) operator() (*zkcoord.Session, error) {
	if h.op != nil && h.op.Err() == nil {
		return h.op, nil
	}
	if h.op != nil {
		h.op.Close(context.Background())
	}
	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: h.zk.Servers(), SessionTimeout: 20 * time.Second})
	if err != nil {
		return nil, err
	}
	h.op = s
	return s, nil
}

// operate runs an operator action, again on a new Session if one is lost.
func (h *harness) operate(what string, f func(ctx context.Context, s *zkcoord.Session) error) error {
	ctx, cancel := context.WithTimeout(h.ctx, 2*time.Minute)
	defer cancel()
	var err error
	for ctx.Err() == nil {
		var s *zkcoord.Session
		if s, err = h.operator(); err == nil {
			if err = f(ctx, s); err == nil || s.Err() == nil {
				break
			}
		}
		h.sleep(200 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", what, err)
	}
	return nil
}

// addResource registers a new resource.
func (h *harness) addResource() error {
	h.nextResource++
	r := resourceName(h.nextResource)
	if err := h.changeResource("add", r, rebalance.AddResource, rebalance.ErrResourceExists); err != nil {
		return err
	}
	h.resources = append(h.resources, r)
	h.mark(event.Note, "operator", "added "+r)
	return nil
}

// removeResource removes resource number pick (modulo their count).
func (h *harness) removeResource(pick int) (string, error) {
	i := pick % len(h.resources)
	r := h.resources[i]
	if err := h.changeResource("remove", r, rebalance.RemoveResource, rebalance.ErrNoResource); err != nil {
		return r, err
	}
	h.resources = slices.Delete(h.resources, i, i+1)
	h.mark(event.Note, "operator", "removed "+r)
	return r, nil
}

// changeResource adds or removes (verb) resource r: in a rebalancing
// group as the operator, with change, whose error done means that it was
// done already; in the other workloads by telling every client.
func (h *harness) changeResource(verb, r string, change func(context.Context, *zkcoord.Session, string, string) error, done error) error {
	if !h.o.Workload.rebalance() {
		h.broadcast(verb + " " + r)
		return nil
	}
	return h.operate(verb+" "+r, func(ctx context.Context, s *zkcoord.Session) error {
		err := change(ctx, s, zkcoord.Join(h.root, rebalanceGroup), r)
		if errors.Is(err, done) {
			return nil
		}
		return err
	})
}

// broadcast sends a command to every live client (election and lock
// workloads learn their resources this way).
func (h *harness) broadcast(cmd string) {
	for _, name := range h.live() {
		c := h.clients[name]
		if err := c.proc.Send(cmd); err != nil && !c.expected {
			h.problem("telling %s %q: %v", name, cmd, err)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
