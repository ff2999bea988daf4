package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/zktest"
)

// The cli workload runs the zkcoord binary itself. Each client is a
// zkcoord process, run over and over under one name: "zkcoord lock",
// "zkcoord elect" or "zkcoord rebalance --exec", by turns from one client
// to the next. The command it runs is a shell that starts the "use" role
// (useMain) in the background and waits for it, so the process that uses
// the resource is zkcoord's grandchild, as with a wrapper script. In a
// third of the runs the wrapper daemonizes the worker into a session of
// its own (setsid), in another third it double-forks it there (orphaned
// at once; see cliWrapper), so that only a supervisor that reaches every
// descendant, not just the command's process group, stops it; and a third
// of the lock and election workers ignore SIGTERM altogether (their hold
// time or SIGKILL ends them; not with BugGrace, see cliLinger). The
// service records that grandchild's holdings itself (acquire, release, and
// the release implied when its connection closes, which is when the
// process is gone), so the checker sees what really ran, not what zkcoord
// believes.
//
// The faults are aimed at the supervisor:
//
//   - kill-client: SIGKILL of zkcoord; its command's whole process tree,
//     daemonized workers included, must die with it, or the worker goes
//     on past the session's expiry while the next owner starts;
//   - term-partitioned: the client is cut off from every server, then
//     zkcoord gets SIGTERM while its --grace (cliGrace) is far longer than
//     the session timeout, and the command lingers on SIGTERM (cliLinger,
//     beyond the timeout); the stop must end before the server can expire
//     the session;
//   - partition-medium, partition-long: the client is cut off from every
//     server, for less or more than the session timeout;
//   - partition-partial: the client is cut off from some servers but not
//     the others, so reconnects start and stall mid-handshake.
//
// Pauses of zkcoord are left out: a stopped supervisor cannot stop its
// command, and no fencing of the supervisor reaches the command.

// Fault kinds of the cli workload.
const (
	// TermPartitioned: cut a client off from every server, SIGTERM its
	// zkcoord Pick-dependent time later (up to T/2), heal after Dur.
	TermPartitioned Kind = "term-partitioned"
	// PartitionPartial: cut a client off from a nonempty, strict subset of
	// the servers (chosen by Pick) for Dur.
	PartitionPartial Kind = "partition-partial"
)

const (
	cliGroup     = "cli"
	cliRestart   = 200 * time.Millisecond // between two runs of a client's zkcoord
	cliStopLimit = 2 * time.Minute        // for zkcoord to stop after SIGTERM
)

// cliGrace is the --grace given to zkcoord: far longer than the session
// timeout, so that only the cut at the session's expiry deadline keeps a
// stop during a partition safe.
func (o *Options) cliGrace() time.Duration { return 8 * o.SessionTimeout }

// cliLinger is how long the command of a client with bug goes on after
// SIGTERM: longer than the session timeout. With BugGrace, whose stop waits
// for the command (up to the whole grace) while the session expires, half
// the grace: long enough after the expiry for the next owner to start,
// even a rebalancer that must first reassign the resource, on a loaded
// machine too, so that each stop during a partition shows as a double
// access.
func (o *Options) cliLinger(bug string) time.Duration {
	if bug == BugGrace {
		return o.cliGrace() / 2
	}
	return o.SessionTimeout * 3 / 2
}

// cliClient is one client name and the zkcoord processes run under it.
type cliClient struct {
	name    string
	command string   // "lock", "elect" or "rebalance"
	flags   []string // given to the command after its PATH: the kind of lock
	bug     string
	proxies []*zktest.Proxy // one per server, so a partition can cut some and not others
	log     string

	mu   sync.Mutex
	proc *launch.Proc // the zkcoord running now, if any
	runs int
	done chan struct{} // closed once the client's loop ended
}

func (c *cliClient) current() *launch.Proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc
}

// servers is the client's connect string: server i through proxy i.
func (c *cliClient) servers() string {
	addrs := make([]string, len(c.proxies))
	for i, p := range c.proxies {
		addrs[i] = p.Servers()[i]
	}
	return strings.Join(addrs, ",")
}

// cliRun is one run of the cli workload.
type cliRun struct {
	*harness
	zkcoord  string
	use      string              // shell words that start the use role
	byCmd    map[string][]string // command -> its resources
	clients  []*cliClient
	stopping atomic.Bool
}

// runCLI is Run for the cli workload.
func runCLI(h *harness) (*Report, error) {
	r := &cliRun{harness: h, byCmd: map[string][]string{}}
	defer func() {
		for _, c := range r.clients {
			for _, p := range c.proxies {
				p.Close()
			}
		}
	}()
	if err := r.setup(); err != nil {
		r.stopAll()
		return nil, err
	}
	r.faults()
	return h.report(r.finish()), nil
}

// buildZkcoord builds the zkcoord binary into dir; with broken, with the
// zkcoord_broken tag, the only build in which ZKCOORD_TEST_BROKEN restores
// a known broken behaviour.
func buildZkcoord(dir string, broken bool) (string, error) {
	out := filepath.Join(dir, "zkcoord")
	args := []string{"build", "-o", out}
	if broken {
		args = append(args, "-tags", "zkcoord_broken")
	}
	cmd := exec.Command("go", append(args, "github.com/zkcoord/zkcoord/cmd/zkcoord")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("chaos: building zkcoord: %v\n%s", err, stderr.String())
	}
	return out, nil
}

// shellQuote quotes s as one word for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// shellCommand renders a Spec as a sh command line.
func shellCommand(s launch.Spec) string {
	var words []string
	if len(s.Env) > 0 {
		words = append(words, "env")
		for _, kv := range s.Env {
			words = append(words, shellQuote(kv))
		}
	}
	words = append(words, shellQuote(s.Path))
	for _, a := range s.Args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

func (r *cliRun) setup() error {
	o := r.o
	r.zkcoord = o.Zkcoord
	if r.zkcoord == "" {
		var err error
		if r.zkcoord, err = buildZkcoord(r.sockDir, o.Bug != ""); err != nil {
			return err
		}
	}
	r.use = shellCommand(o.Spawn("use", RoleUse, nil))
	if err := r.startService(); err != nil {
		return err
	}
	// Resources: a sixth each for locks and elections (so that the two
	// clients of each command contend for them), the rest for the
	// rebalancing group.
	n := max(o.Resources/6, 1)
	for i := range o.Resources {
		cmd, prefix := "rebalance", "b"
		switch {
		case i < n:
			cmd, prefix = "lock", "l"
		case i < 2*n:
			cmd, prefix = "elect", "e"
		}
		res := fmt.Sprintf("%s%d", prefix, len(r.byCmd[cmd])+1)
		r.byCmd[cmd] = append(r.byCmd[cmd], res)
		r.resources = append(r.resources, res)
		if cmd == "rebalance" {
			err := r.operate("add "+res, func(ctx context.Context, s *zkcoord.Session) error {
				err := rebalance.AddResource(ctx, s, zkcoord.Join(r.root+"/rebalance", cliGroup), res)
				if errors.Is(err, rebalance.ErrResourceExists) {
					return nil
				}
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	commands := []string{"lock", "elect", "rebalance"}
	reader := o.Bug == BugMixedKinds // the first lock client still to be made a reader
	for i := range o.Clients {
		c := &cliClient{name: clientName(i + 1), command: commands[i%len(commands)], done: make(chan struct{})}
		if len(r.byCmd[c.command]) == 0 {
			c.command = "lock"
		}
		if c.command == "lock" && reader {
			// Mixed kinds: one client takes the read side of a read/write
			// lock, the others a mutex, on the same paths. It is the only
			// reader, so two holders at once are always a reader and a
			// writer, which a fixed zkcoord never lets happen.
			c.flags, reader = []string{"--read"}, false
		}
		if slices.Contains(o.BugClients, c.name) {
			c.bug = o.Bug
		}
		c.log = filepath.Join(r.dir, "logs", c.name+".log")
		for range r.zk.Servers() {
			p, err := r.zk.OpenProxy()
			if err != nil {
				return err
			}
			c.proxies = append(c.proxies, p)
		}
		r.clients = append(r.clients, c)
		r.addLive(&client{name: c.name})
	}
	for _, c := range r.clients {
		go r.loop(c)
	}
	r.logf("started cli: %d zkcoord clients (%s), resources %v, ZooKeeper %s, root %s, zkcoord %s",
		len(r.clients), r.commandsOf(), r.resources, r.zk.ConnectString(), r.root, r.zkcoord)
	at, ok, why := r.converge(event.Now())
	if !ok {
		return fmt.Errorf("chaos: the group did not converge at the start: %s", why)
	}
	r.logf("converged at start after %v", time.Duration(at-r.t0).Round(time.Millisecond))
	return nil
}

func (r *cliRun) commandsOf() string {
	var s []string
	for _, c := range r.clients {
		s = append(s, c.name+"="+strings.Join(append([]string{c.command}, c.flags...), " "))
	}
	return strings.Join(s, " ")
}

// args is the command line of the client's next zkcoord.
// Its command's holdings are recorded under the client's name and the
// number of the run ("c3.2"), so that a command that outlives its zkcoord
// shows up as a second holder beside the next run's.
func (r *cliRun) args(c *cliClient, run int, rng *rand.Rand) []string {
	o := r.o
	script := func(resource string, hold bool) string {
		use := fmt.Sprintf("%s -socket %s -name %s.%d -every %v -linger %v", r.use, shellQuote(r.socket), c.name, run,
			o.UseInterval, o.cliLinger(c.bug))
		if resource != "" {
			use += " -resource " + resource
		}
		if hold {
			use += fmt.Sprintf(" -hold-min %v -hold-max %v", o.SessionTimeout, 2*o.SessionTimeout)
			// A worker with a hold time may ignore SIGTERM: its hold
			// ends it, or SIGKILL. Not with BugGrace: a hold that ends
			// soon after SIGTERM, before the session can expire, would
			// hide the stop that waits out the grace.
			if rng.IntN(3) == 0 && c.bug != BugGrace {
				use += " -ignore-term"
			}
		}
		return cliWrapper(use, cliDaemon(rng.IntN(3)), c.bug == BugGroupKill)
	}
	grace := o.cliGrace().String()
	switch c.command {
	case "rebalance":
		return []string{"rebalance", cliGroup, "--root", r.root + "/rebalance", "--name", c.name,
			"--grace", grace, "--restart", "always", "--restart-delay", "200ms", "--exec", script("", false)}
	case "elect":
		res := r.byCmd["elect"][rng.IntN(len(r.byCmd["elect"]))]
		return []string{"elect", r.root + "/elect/" + res, "--id", c.name, "--grace", grace,
			"--", "/bin/sh", "-c", script(res, true)}
	}
	res := r.byCmd["lock"][rng.IntN(len(r.byCmd["lock"]))]
	args := append([]string{"lock", r.root + "/lock/" + res}, c.flags...)
	return append(args, "--grace", grace, "--", "/bin/sh", "-c", script(res, true))
}

// How a command's wrapper starts its worker (see cliWrapper).
type cliDaemon int

const (
	cliPlain      cliDaemon = iota // in the background, in the wrapper's process group
	cliSetsid                      // in a session of its own
	cliDoubleFork                  // double-forked (orphaned at once) into a session of its own
)

// cliWrapper is the shell script of a command: a wrapper that starts the
// worker use as daemon says and runs until the worker has exited, also
// after SIGTERM. A worker in a session of its own is out of the reach of
// the command's process group: only a supervisor that reaches every
// descendant stops it (and, once the wrapper is gone, reaps it). With
// escape, the worker always leaves the group.
func cliWrapper(use string, daemon cliDaemon, escape bool) string {
	if escape && daemon == cliPlain {
		daemon = cliSetsid
	}
	switch daemon {
	case cliSetsid:
		return "trap 'wait' TERM; setsid " + use + " & wait"
	case cliDoubleFork:
		// The worker's parent, a subshell, exits at once: the wrapper
		// cannot wait for it, and polls /proc (a zombie no subreaper
		// reaps has exited all the same). It reads with the shell's own
		// read: a cat or a command substitution would be a process of
		// the group, which the SIGTERM the wrapper outlives kills, and
		// the poll would take the worker for gone.
		return "trap : TERM; pid=$( (setsid " + use + " >/dev/null & echo $!) ); " +
			`alive() { read -r s < /proc/$1/stat && s=${s##*) } && [ "${s%% *}" != Z ]; } 2>/dev/null; ` +
			"while alive $pid; do sleep 0.1; done"
	}
	return "trap 'wait' TERM; " + use + " & wait"
}

// loop runs the client's zkcoord over and over until the run stops.
func (r *cliRun) loop(c *cliClient) {
	defer close(c.done)
	rng := rand.New(rand.NewPCG(r.o.Seed, seedFor(r.o.Seed, c.name, "cli")))
	env := []string{"ZKCOORD_SERVERS=" + c.servers(), "ZKCOORD_SESSION_TIMEOUT=" + r.o.SessionTimeout.String(),
		"ZKCOORD_LOG_LEVEL=info", "ZKCOORD_TEST_BROKEN=" + c.bug}
	for !r.stopping.Load() && r.ctx.Err() == nil {
		c.mu.Lock()
		c.runs++
		run := c.runs
		c.mu.Unlock()
		args := r.args(c, run, rng)
		p, err := launch.Start(r.ctx, launch.Spec{Path: r.zkcoord, Args: args, Env: env, Name: "zkcoord " + c.name}, nil)
		if err != nil {
			r.problem("starting zkcoord for %s: %v", c.name, err)
			return
		}
		c.mu.Lock()
		c.proc = p
		c.mu.Unlock()
		<-p.Done()
		c.mu.Lock()
		c.proc = nil
		c.mu.Unlock()
		r.appendLog(c, p, args)
		if !r.stopping.Load() {
			r.sleep(cliRestart)
		}
	}
}

// appendLog writes what a zkcoord process said to its client's log.
func (r *cliRun) appendLog(c *cliClient, p *launch.Proc, args []string) {
	f, err := os.OpenFile(c.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "=== zkcoord %s (pid %d): %v\ncommand: %s\n%s\n", strings.Join(args[:2], " "), p.Pid(), p.ExitErr(),
		args[len(args)-1], p.Stderr())
}

// stopAll stops every client's zkcoord with SIGTERM and waits for them.
func (r *cliRun) stopAll() {
	r.stopping.Store(true)
	var wg sync.WaitGroup
	for _, c := range r.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-c.done:
					return
				default:
				}
				if p := c.current(); p != nil {
					if err := p.Terminate(cliStopLimit); err != nil {
						r.problem("stopping %s: %v", c.name, err)
					}
				}
				select {
				case <-c.done:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
}

// converge waits until every lock and election resource has been acquired
// since since and every resource of the rebalancing group is held.
func (r *cliRun) converge(since int64) (at int64, ok bool, why string) {
	deadline := time.Now().Add(r.o.ConvergeTimeout)
	for {
		ok, why = r.settled(since)
		if ok {
			return event.Now(), true, ""
		}
		if time.Now().After(deadline) || r.ctx.Err() != nil {
			return 0, false, why
		}
		r.sleep(pollEvery)
	}
}

func (r *cliRun) settled(since int64) (bool, string) {
	acquired := map[string]bool{}
	held := map[string]bool{}
	for _, iv := range r.hist.Intervals() {
		if iv.Start >= since {
			acquired[iv.Resource] = true
		}
		if iv.Open {
			held[iv.Resource] = true
		}
	}
	for cmd, list := range r.byCmd {
		for _, res := range list {
			if cmd == "rebalance" && !held[res] {
				return false, res + " is not held"
			}
			if cmd != "rebalance" && !acquired[res] {
				return false, res + " was not acquired again"
			}
		}
	}
	return true, ""
}

// cliPlanner draws the cli workload's faults.
type cliPlanner struct {
	rng *rand.Rand
	o   *Options
}

func newCLIPlanner(o *Options) *cliPlanner {
	return &cliPlanner{rng: rand.New(rand.NewPCG(o.Seed, seedFor(o.Seed, "cli-plan"))), o: o}
}

func (p *cliPlanner) dur(lo, hi time.Duration) time.Duration {
	return (lo + time.Duration(p.rng.Int64N(int64(hi-lo)))).Round(time.Millisecond)
}

// Next draws the next fault.
func (p *cliPlanner) Next() Fault {
	T := p.o.SessionTimeout
	f := Fault{Pick: p.rng.IntN(1 << 16), Wait: p.dur(T/4, T)}
	switch k := p.rng.IntN(10); {
	case k < 3:
		f.Kind = KillClient
	case k < 6:
		f.Kind, f.Dur = TermPartitioned, p.dur(3*T/2, 2*T)
	case k < 7:
		f.Kind, f.Dur = PartitionMedium, p.dur(time.Duration(p.o.LostAfter*float64(T))+T/10, T-T/20)
	case k < 8:
		f.Kind, f.Dur = PartitionLong, p.dur(3*T/2, 2*T)
	default:
		f.Kind, f.Dur = PartitionPartial, p.dur(T, 3*T)
	}
	return f
}

// faults runs the schedule: explicit, or drawn by the cli planner until
// Duration has passed.
func (r *cliRun) faults() {
	var draw func() Fault
	if len(r.o.Faults) == 0 {
		draw = newCLIPlanner(&r.o).Next
	}
	r.schedule(draw, r.episode)
}

// episode applies one fault, ends it, and waits for the group to converge.
func (r *cliRun) episode(n int, f Fault) FaultRecord {
	rec := FaultRecord{N: n, Fault: f, Start: event.Now()}
	c := r.target(f.Pick)
	T := r.o.SessionTimeout
	cut := func(mask int) func() {
		from := event.Now()
		for i, p := range c.proxies {
			if mask&(1<<i) != 0 {
				if err := p.Blackhole(); err != nil {
					r.problem("cutting %s off: %v", c.name, err)
				}
			}
		}
		return func() {
			for _, p := range c.proxies {
				if err := p.Heal(); err != nil {
					r.problem("healing %s: %v", c.name, err)
				}
			}
			r.spans = append(r.spans, Span{Target: c.name, What: "partitioned", From: from, To: event.Now(), Fault: n})
		}
	}
	all := 1<<len(c.proxies) - 1
	switch f.Kind {
	case KillClient:
		rec.Detail = fmt.Sprintf("SIGKILL zkcoord %s of %s", c.command, c.name)
		r.mark(event.Fault, c.name, rec.Detail)
		if p := c.current(); p != nil {
			p.Kill()
		}
		rec.Healed = event.Now()
	case TermPartitioned:
		after := T / 2 * time.Duration(f.Pick%5) / 4
		rec.Detail = fmt.Sprintf("cut zkcoord %s of %s off for %v, SIGTERM after %v", c.command, c.name,
			f.Dur.Round(time.Millisecond), after)
		r.mark(event.Fault, c.name, rec.Detail)
		heal := cut(all)
		r.sleep(after)
		if p := c.current(); p != nil {
			go p.Terminate(cliStopLimit)
		}
		r.sleep(f.Dur - after)
		rec.Healed = event.Now()
		heal()
	case PartitionMedium, PartitionLong, PartitionPartial:
		mask := all
		if f.Kind == PartitionPartial {
			mask = 1 + (f.Pick>>4)%(all-1) // nonempty, not all
		}
		rec.Detail = fmt.Sprintf("cut zkcoord %s of %s off from servers %s for %v", c.command, c.name,
			serverSet(mask, len(c.proxies)), f.Dur.Round(time.Millisecond))
		r.mark(event.Fault, c.name, rec.Detail)
		heal := cut(mask)
		r.sleep(f.Dur)
		rec.Healed = event.Now()
		heal()
	default:
		rec.Detail = fmt.Sprintf("%s (not a cli fault: skipped)", f.Kind)
		rec.Healed = event.Now()
	}
	at, ok, why := r.converge(rec.Healed)
	rec.OK, rec.Why = ok, why
	if ok {
		rec.Converged = at
		rec.Converge = time.Duration(at - rec.Healed)
	}
	return rec
}

// target picks the client a fault hits: of the clients running the command
// of client number pick (modulo their count), the one that holds a
// resource now, whichever won it. A lock or election worker must have
// taken it less than half a session timeout ago: its hold lasts at least a
// session timeout (see args), so the fault lands well before the hold ends
// by itself, which would end the command and leave the fault nothing to
// hit. Between two holders (a lock or a leadership changing hands) it waits
// for the next, up to twice the longest hold; if none comes, the next
// client that holds one, so that faults hit supervisors at work, and the
// one a schedule names where it can.
func (r *cliRun) target(pick int) *cliClient {
	n := len(r.clients)
	picked := r.clients[pick%n]
	T := r.o.SessionTimeout
	deadline := time.Now().Add(4 * T)
	for {
		holding, fresh := map[string]bool{}, map[string]bool{}
		now := event.Now()
		for _, iv := range r.hist.Intervals() {
			if iv.Open {
				name, _, _ := strings.Cut(iv.Client, ".")
				holding[name] = true
				if time.Duration(now-iv.Start) < T/2 {
					fresh[name] = true
				}
			}
		}
		holds := func(c *cliClient) bool { return holding[c.name] && c.current() != nil }
		// The holder among the clients running the picked command,
		// whichever of them won at the start.
		for i := range n {
			c := r.clients[(pick+i)%n]
			if c.command == picked.command && holds(c) && (c.command == "rebalance" || fresh[c.name]) {
				return c
			}
		}
		if time.Now().After(deadline) || r.ctx.Err() != nil {
			for i := range n {
				if c := r.clients[(pick+i)%n]; holds(c) {
					return c
				}
			}
			return picked
		}
		r.sleep(pollEvery)
	}
}

// serverSet names the servers in mask: "zk0,zk2".
func serverSet(mask, n int) string {
	var s []string
	for i := range n {
		if mask&(1<<i) != 0 {
			s = append(s, fmt.Sprintf("zk%d", i))
		}
	}
	return strings.Join(s, ",")
}

// finish checks the final state after the last fault, then stops every
// client and the service.
func (r *cliRun) finish() FinalState {
	r.mark(event.Quiet, "harness", "faults over")
	quiet := event.Now()
	at, ok, why := r.converge(quiet)
	if ok {
		// Locks and leaders keep changing hands: check that they still do
		// after the settle time.
		r.sleep(r.o.Settle)
		_, ok, why = r.converge(event.Now())
	}
	fs := r.finalState(quiet, at, ok, why, r.hist.Holdings())
	r.stopAll()
	runs := 0
	for _, c := range r.clients {
		runs += c.runs
	}
	r.mark(event.Note, "harness", fmt.Sprintf("%d zkcoord processes run", runs))
	r.stopService()
	return fs
}
