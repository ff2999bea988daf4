package rebalance_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
	"github.com/zkcoord/zkcoord/zktest"
)

// Environment variables of the randomized test.
const (
	// fullEnv=1 runs the full-size randomized test (make target).
	fullEnv = "REBALANCE_FULL"
	// seedEnv replays a run with the seed it printed.
	seedEnv = "REBALANCE_SEED"
)

// simSize is the size of a randomized run.
type simSize struct {
	initial, maxClients int
	resources           int
	steps, quietEvery   int
	maxPause            time.Duration // between steps
	timeout             time.Duration // session timeout of the clients
}

var (
	smallSim = simSize{initial: 3, maxClients: 5, resources: 20, steps: 30, quietEvery: 15,
		maxPause: 300 * time.Millisecond, timeout: 4 * time.Second}
	fullSim = simSize{initial: 5, maxClients: 10, resources: 120, steps: 250, quietEvery: 25,
		maxPause: 600 * time.Millisecond, timeout: 4 * time.Second}
)

// TestRandomized drives client processes (this test binary, re-executed)
// through random joins, graceful leaves, SIGKILL crashes, network partitions
// shorter than the self-expiry limit, between it and the session timeout,
// and longer than the session timeout, and resource additions and
// removals (sometimes of an id removed earlier), in every mode. After every
// step the history of acquire and release events that the processes report
// is checked for two clients holding one resource at once (invariant 1); at
// quiet points, with all partitions healed, the holdings must become
// balanced (invariant 2).
func TestRandomized(t *testing.T) {
	size := smallSim
	if os.Getenv(fullEnv) == "1" {
		size = fullSim
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(seedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", seedEnv, err)
		}
		seed = v
	}
	// The small runs share nothing but the server, which none of them
	// faults: they run side by side, and beside the package's other
	// parallel tests. A full run's clients load the machine on their own:
	// those go one at a time.
	parallel := func(t *testing.T) {
		if size == smallSim {
			t.Parallel()
		}
	}
	parallel(t)
	for i, mode := range []rebalance.Mode{rebalance.Incremental, rebalance.ResourceBarrier, rebalance.GlobalBarrier} {
		t.Run(mode.String(), func(t *testing.T) {
			parallel(t)
			s := seed + uint64(i)
			t.Logf("seed %d (replay with %s=%d)", s, seedEnv, seed)
			newSim(t, mode, size, s).run()
		})
	}
	// Clients of weights 1 to 3, one in three giving none: at quiet
	// points each holds its share of the resources rounded down or up.
	t.Run("incremental-weighted", func(t *testing.T) {
		parallel(t)
		s := seed + 3
		t.Logf("seed %d (replay with %s=%d)", s, seedEnv, seed)
		sim := newSim(t, rebalance.Incremental, size, s)
		sim.weights = map[string]int64{}
		sim.run()
	})
}

type sim struct {
	t       *testing.T
	mode    rebalance.Mode
	size    simSize
	rng     *rand.Rand
	ctx     context.Context
	root    string
	group   string
	hist    *oracle.History
	op      *zkcoord.Session // the operator's
	procs   launch.Group
	clients []*simClient // live ones
	names   int
	res     []string // registered resources
	removed []string // ids removed and not registered again
	readded int
	nextRes int
	syncs   int // sync requests sent to the client processes
	raceDir string
	// weights, if not nil, holds the weight of each client (by name)
	// that gives one; the others weigh 1.
	weights map[string]int64
}

type simClient struct {
	name   string
	proc   *launch.Proc
	proxy  *zktest.Proxy
	healAt time.Time // zero unless partitioned
	syncc  chan struct{}
	mu     sync.Mutex
	output []string // non-event lines, for failure reports
	synced int      // the last sync request answered
}

func newSim(t *testing.T, mode rebalance.Mode, size simSize, seed uint64) *sim {
	s := &sim{t: t, mode: mode, size: size, rng: rand.New(rand.NewPCG(seed, seed>>1|1)),
		ctx: testCtx(t, 20*time.Minute), root: newRoot(t), group: "g", hist: &oracle.History{}, op: connect(t), raceDir: t.TempDir()}
	t.Cleanup(s.checkRaces)
	t.Cleanup(s.procs.Close)
	t.Cleanup(func() {
		if t.Failed() {
			s.dump()
		}
	})
	return s
}

func (s *sim) run() {
	for range s.size.resources {
		s.addResource()
	}
	for range s.size.initial {
		s.join()
	}
	s.quiet("start")
	for step := 1; step <= s.size.steps; step++ {
		s.step()
		s.healDue()
		s.checkExclusive(fmt.Sprintf("step %d", step))
		s.checkAlive()
		if step%s.size.quietEvery == 0 {
			s.quiet(fmt.Sprintf("step %d", step))
		}
		s.pause(s.size.maxPause)
	}
	s.quiet("end")
	for len(s.clients) > 0 {
		s.leave(s.clients[0])
	}
	// Every process is gone and all of its output read: the whole history
	// is checked.
	s.failViolations("after the last leave", s.hist.CheckExclusive())
	s.summary()
	if h := s.hist.Holdings(); len(h) != 0 {
		s.t.Fatalf("resources still held after every client left: %v", h)
	}
}

// step performs one random action.
func (s *sim) step() {
	n := len(s.clients)
	switch r := s.rng.IntN(100); {
	case r < 14 && n < s.size.maxClients:
		s.join()
	case r < 26 && n > 2:
		s.leave(s.pick())
	case r < 36 && n > 2:
		s.crash(s.pick())
	case r < 46:
		// Shorter than the self-expiry limit: nothing may happen.
		s.partition(s.pick(), 0.1, 0.35)
	case r < 54:
		// Between self-expiry and the session timeout: the client gives up
		// its session (and everything), the server keeps it until expiry.
		s.partition(s.pick(), 0.6, 0.9)
	case r < 62:
		// Longer than the session timeout: the server expires the session.
		s.partition(s.pick(), 1.2, 1.8)
	case r < 80 && len(s.res) < s.size.resources*3/2:
		s.addResource()
	case r < 95 && len(s.res) > s.size.resources/2:
		s.removeResource()
	default:
		s.pause(2 * s.size.maxPause)
	}
}

func (s *sim) pick() *simClient { return s.clients[s.rng.IntN(len(s.clients))] }

func (s *sim) pause(max time.Duration) {
	time.Sleep(time.Duration(s.rng.Int64N(int64(max))))
}

func (s *sim) join() {
	s.names++
	name := fmt.Sprintf("p%d", s.names)
	c := &simClient{name: name, proxy: cluster.NewProxy(s.t), syncc: make(chan struct{}, 1)}
	spec := launch.Self(name, childRole, "-servers", strings.Join(c.proxy.Servers(), ","),
		"-root", s.root, "-group", s.group, "-mode", s.mode.String(), "-name", name,
		"-timeout", s.size.timeout.String(), "-lost-after", "0.5", "-min-interval", "100ms")
	if s.weights != nil {
		if w := s.rng.Int64N(4); w > 0 {
			s.weights[name] = w
			spec.Args = append(spec.Args, "-weight", strconv.FormatInt(w, 10))
		}
	}
	// A race-enabled child writes race reports to a file instead of
	// failing its exit status; checkRaces judges them.
	spec.Env = append(spec.Env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+
		" atexit_sleep_ms=0 exitcode=0 log_path="+filepath.Join(s.raceDir, name)))
	ready := make(chan struct{})
	var once sync.Once
	sink := s.hist.Sink(name, func(line string) {
		if n, ok := strings.CutPrefix(line, "synced "); ok {
			c.answered(n)
			return
		}
		c.mu.Lock()
		c.output = append(c.output, line)
		c.mu.Unlock()
		if strings.HasPrefix(line, "ready ") {
			once.Do(func() { close(ready) })
		}
	})
	p, err := s.procs.Start(s.ctx, spec, sink)
	if err != nil {
		s.t.Fatalf("start %s: %v", name, err)
	}
	c.proc = p
	select {
	case <-ready:
	case <-p.Done():
		s.t.Fatalf("%s exited before joining: %v\n%s", name, p.ExitErr(), p.Stderr())
	case <-time.After(60 * time.Second):
		s.t.Fatalf("%s did not join in time\n%s", name, p.Stderr())
	}
	s.hist.Mark(event.Note, name, "joined")
	s.clients = append(s.clients, c)
}

func (s *sim) remove(c *simClient) {
	s.clients = slices.DeleteFunc(s.clients, func(x *simClient) bool { return x == c })
	c.proxy.Close()
}

func (s *sim) leave(c *simClient) {
	s.heal(c)
	s.hist.Mark(event.Note, c.name, "leaving")
	if err := c.proc.Send("stop"); err != nil {
		s.t.Fatalf("stop %s: %v", c.name, err)
	}
	ctx, cancel := context.WithTimeout(s.ctx, 60*time.Second)
	defer cancel()
	if err := c.proc.Wait(ctx); err != nil {
		s.t.Fatalf("%s did not leave cleanly: %v\n%s", c.name, err, c.proc.Stderr())
	}
	s.hist.Add(event.Event{Client: c.name, Kind: event.Exit})
	s.remove(c)
}

func (s *sim) crash(c *simClient) {
	if err := c.proc.Kill(); err != nil {
		s.t.Fatalf("kill %s: %v", c.name, err)
	}
	s.hist.Add(event.Event{Client: c.name, Kind: event.Crash})
	s.remove(c)
}

// partition cuts c off for a random fraction of the session timeout in
// [lo, hi); it is healed by a later step.
func (s *sim) partition(c *simClient, lo, hi float64) {
	if !c.healAt.IsZero() {
		return
	}
	d := time.Duration((lo + s.rng.Float64()*(hi-lo)) * float64(s.size.timeout))
	if err := c.proxy.Blackhole(); err != nil {
		s.t.Fatalf("partition %s: %v", c.name, err)
	}
	c.healAt = time.Now().Add(d)
	s.hist.Mark(event.Fault, c.name, "partitioned for "+d.Round(time.Millisecond).String())
}

func (s *sim) heal(c *simClient) {
	if c.healAt.IsZero() {
		return
	}
	if err := c.proxy.Heal(); err != nil {
		s.t.Fatalf("heal %s: %v", c.name, err)
	}
	c.healAt = time.Time{}
	s.hist.Mark(event.Fault, c.name, "healed")
}

func (s *sim) healDue() {
	for _, c := range s.clients {
		if !c.healAt.IsZero() && time.Now().After(c.healAt) {
			s.heal(c)
		}
	}
}

// addResource registers a new resource or, sometimes, one removed earlier,
// whose previous owner may still be stopping it.
func (s *sim) addResource() {
	var id string
	if len(s.removed) > 0 && s.rng.IntN(3) == 0 {
		i := s.rng.IntN(len(s.removed))
		id = s.removed[i]
		s.removed = slices.Delete(s.removed, i, i+1)
		s.readded++
	} else {
		id = fmt.Sprintf("r%04d", s.nextRes)
		s.nextRes++
	}
	if err := rebalance.AddResource(s.ctx, s.op, zkcoord.Join(s.root, s.group), id); err != nil {
		s.t.Fatalf("add %s: %v", id, err)
	}
	s.res = append(s.res, id)
	s.hist.Mark(event.Note, "operator", "added "+id)
}

func (s *sim) removeResource() {
	i := s.rng.IntN(len(s.res))
	id := s.res[i]
	if err := rebalance.RemoveResource(s.ctx, s.op, zkcoord.Join(s.root, s.group), id); err != nil {
		s.t.Fatalf("remove %s: %v", id, err)
	}
	s.res = slices.Delete(s.res, i, i+1)
	s.removed = append(s.removed, id)
	s.hist.Mark(event.Note, "operator", "removed "+id)
}

// quiet heals every partition and waits until the live clients hold every
// resource, evenly.
func (s *sim) quiet(when string) {
	for _, c := range s.clients {
		s.heal(c)
	}
	s.hist.Mark(event.Quiet, "", when)
	names := make([]string, len(s.clients))
	for i, c := range s.clients {
		names[i] = c.name
	}
	deadline := 60 * time.Second
	testkit.WaitFor(s.t, deadline, "balanced at "+when, func() error {
		h := s.delivered()
		s.failViolations(when, h.CheckExclusive())
		s.checkAlive()
		if s.weights != nil {
			return checkShares(h.Holdings(), names, s.weights, s.res)
		}
		return oracle.CheckBalanced(h.Holdings(), names, s.res)
	})
}

// checkShares checks invariant 2 with weights: every resource is held by
// exactly one live client, and each holds its share, M*w/W, rounded down
// or up.
func checkShares(holdings map[string][]string, clients []string, weights map[string]int64, resources []string) error {
	if _, err := alloc.Validate(holdings, clients, resources); err != nil {
		return err
	}
	weight := func(c string) int64 { return max(weights[c], 1) }
	var total int64
	for _, c := range clients {
		total += weight(c)
	}
	m := int64(len(resources))
	for _, c := range clients {
		n, floor := int64(len(holdings[c])), m*weight(c)/total
		if n < floor || n > floor+1 || (n == floor+1 && m*weight(c)%total == 0) {
			return fmt.Errorf("%s (weight %d) holds %d of %d resources; its share is %d*%d/%d",
				c, weight(c), n, m, m, weight(c), total)
		}
	}
	return nil
}

// checkExclusive checks invariant 1 on the part of the history that every
// process has delivered.
func (s *sim) checkExclusive(when string) {
	s.failViolations(when, s.delivered().CheckExclusive())
}

func (s *sim) failViolations(when string, v []oracle.Violation) {
	if len(v) > 0 {
		var b strings.Builder
		for _, x := range v {
			fmt.Fprintln(&b, x)
		}
		s.t.Fatalf("invariant 1 broken (%s):\n%s", when, b.String())
	}
}

// delivered returns the history up to a point that every client process has
// delivered. Each process's output is read by a goroutine of its own, so the
// history may already hold a new owner's acquire but not yet the previous
// owner's earlier release, which would look like an overlap. The events
// stamped before a sync request are complete once every live process has
// answered it, since a process answers after writing all of its earlier
// events.
func (s *sim) delivered() *oracle.History {
	at := event.Now()
	s.syncs++
	n := s.syncs
	for _, c := range s.clients {
		if err := c.proc.Send(fmt.Sprintf("sync %d", n)); err != nil && !errors.Is(err, launch.ErrExited) {
			s.t.Fatalf("sync %s: %v", c.name, err)
		}
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for _, c := range s.clients {
		if err := c.awaitSync(n, deadline.C); err != nil {
			s.t.Fatalf("%v\n%s", err, c.proc.Stderr())
		}
	}
	return s.hist.Before(at)
}

// answered records the client's answer to sync request n.
func (c *simClient) answered(n string) {
	v, err := strconv.Atoi(n)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.synced = max(c.synced, v)
	c.mu.Unlock()
	select {
	case c.syncc <- struct{}{}:
	default:
	}
}

// awaitSync waits until the client has answered sync request n, or its
// process is gone (and all of its output read).
func (c *simClient) awaitSync(n int, deadline <-chan time.Time) error {
	for {
		c.mu.Lock()
		done := c.synced >= n
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-c.syncc:
		case <-c.proc.Done():
			return nil
		case <-deadline:
			return fmt.Errorf("%s did not answer sync request %d", c.name, n)
		}
	}
}

// checkAlive fails if a live client's process ended on its own.
func (s *sim) checkAlive() {
	for _, c := range s.clients {
		select {
		case <-c.proc.Done():
			s.t.Fatalf("%s exited unexpectedly: %v\n%s", c.name, c.proc.ExitErr(), c.proc.Stderr())
		default:
		}
	}
}

// checkRaces reads the race reports of the client processes (after they
// are gone). go-zookeeper v1.0.4 has a known data race between its receive
// loop and the re-sending of watches after a reconnection (Conn.lastZxid);
// reports whose racing accesses are all inside go-zookeeper are logged,
// any other report fails the test.
func (s *sim) checkRaces() {
	files, _ := filepath.Glob(filepath.Join(s.raceDir, "*"))
	known := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			s.t.Errorf("race log: %v", err)
			continue
		}
		for _, report := range strings.Split(string(b), "==================") {
			if !strings.Contains(report, "WARNING: DATA RACE") {
				continue
			}
			if onlyLibraryRace(report) {
				known++
				continue
			}
			s.t.Errorf("data race in client process %s:\n%s", filepath.Base(f), report)
		}
	}
	if known > 0 {
		s.t.Logf("%d known go-zookeeper data race report(s) in client processes ignored", known)
	}
}

// onlyLibraryRace reports whether every racing access of a race report
// happened in go-zookeeper's own code.
func onlyLibraryRace(report string) bool {
	inAccess := false
	frames := 0
	for _, line := range strings.Split(report, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "Write at") || strings.HasPrefix(t, "Read at") ||
			strings.HasPrefix(t, "Previous write at") || strings.HasPrefix(t, "Previous read at"):
			inAccess = true
		case t == "" || strings.HasPrefix(t, "Goroutine "):
			inAccess = false
		case inAccess && strings.HasSuffix(t, ")") && !strings.HasPrefix(t, "/"):
			frames++
			if !strings.HasPrefix(t, "github.com/go-zookeeper/zk.") {
				return false
			}
		}
	}
	return frames > 0
}

// summary logs what the run exercised.
func (s *sim) summary() {
	kinds := map[event.Kind]int{}
	causes := map[string]int{}
	for _, e := range s.hist.Events() {
		kinds[e.Kind]++
		if e.Kind == event.Release {
			cause := e.Detail
			if i := strings.IndexByte(cause, ':'); i >= 0 {
				if j := strings.IndexByte(cause[i+1:], ':'); j >= 0 {
					cause = cause[:i+1+j]
				}
			}
			causes[cause]++
		}
		if e.Kind == event.Fault && strings.HasPrefix(e.Detail, "partitioned") {
			kinds["partition"]++
		}
	}
	s.t.Logf("events: %v; release causes: %v; removed ids added again: %d", kinds, causes, s.readded)
}

// dump writes the history for inspection after a failure.
func (s *sim) dump() {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("rebalance-history-%s-%d.json", s.mode, time.Now().UnixNano()))
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	s.hist.WriteJSON(f)
	s.t.Logf("history written to %s", path)
	for _, p := range s.procs.Procs() {
		tail := p.Stderr()
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		s.t.Logf("stderr of %s:\n%s", p.Name(), tail)
	}
}

func TestOnlyLibraryRace(t *testing.T) {
	library := `WARNING: DATA RACE
Write at 0x00c0001ba000 by goroutine 117:
  github.com/go-zookeeper/zk.(*Conn).recvLoop()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:849 +0x68c
  github.com/go-zookeeper/zk.(*Conn).loop.func2()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:474 +0x1c4

Previous read at 0x00c0001ba000 by goroutine 11:
  github.com/go-zookeeper/zk.(*Conn).sendSetWatches()
      /root/go/pkg/mod/github.com/go-zookeeper/zk@v1.0.4/conn.go:614 +0x49d

Goroutine 117 (running) created at:
  github.com/zkcoord/zkcoord.Connect()
      /work/main/session.go:81 +0xbed
`
	if !onlyLibraryRace(library) {
		t.Error("library race not recognised")
	}
	ours := strings.Replace(library, "github.com/go-zookeeper/zk.(*Conn).sendSetWatches()",
		"github.com/zkcoord/zkcoord/rebalance.(*member).run()", 1)
	if onlyLibraryRace(ours) {
		t.Error("a race in our code was excused")
	}
}
