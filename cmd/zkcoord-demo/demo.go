package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/cmd/internal/groupwatch"
	"github.com/zkcoord/zkcoord/cmd/internal/marked"
	"github.com/zkcoord/zkcoord/internal/fanout"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/zktest/zkserver"
)

// demoOptions are the flags of the demo.
type demoOptions struct {
	workers        int
	resources      int
	sessionTimeout time.Duration
	plain          bool
	history        string
	pace           time.Duration // pause between steps
	paceSet        bool          // --pace given; otherwise it depends on the view
	zk             []string      // --zk given on the command line
	ui             string        // --ui: serve the web console on this address
	zkcoord        string        // --zkcoord: the program the workers run
}

// runDemo checks the options and plays the demo.
func runDemo(a *cli.App, cmd *cobra.Command, o demoOptions) error {
	if o.workers < 2 || o.workers > 9 {
		return cli.Usagef("demo: --workers must be between 2 and 9")
	}
	if o.resources < 1 || o.resources > 99 {
		return cli.Usagef("demo: --resources must be between 1 and 99")
	}
	if o.sessionTimeout < time.Second {
		return cli.Usagef("demo: --worker-session-timeout must be at least 1s")
	}
	if o.pace < 0 {
		return cli.Usagef("demo: --pace must not be negative")
	}
	o.paceSet = cmd.Flags().Changed("pace")
	if cmd.Flags().Changed("zk") {
		cfg, err := a.Conn.Config()
		if err != nil {
			return err
		}
		o.zk = cfg.Servers
	}
	// The demo's own logs would break a redrawn view: show only problems
	// unless asked for more.
	if !cmd.Flags().Changed("log-level") && os.Getenv(cli.EnvLogLevel) == "" {
		a.Logging.Level = "error"
	}
	if err := a.Setup(); err != nil {
		return err
	}
	if o.zkcoord == "" {
		p, err := cli.FindProgram("zkcoord")
		if err != nil {
			return fmt.Errorf("the demo's workers run %w: build both with 'make demo'", err)
		}
		o.zkcoord = p
	}
	d := newDemo(a, o)
	return d.run()
}

// demo is one run of the demo.
type demo struct {
	a     *cli.App
	o     demoOptions
	t0    time.Time
	runID string // marks every process the demo starts (environment)

	cluster *zkserver.Cluster
	servers []string
	sess    *zkcoord.Session
	root    string
	group   string
	view    demoView
	hist    oracle.History
	procs   launch.Group

	mu        sync.Mutex
	workers   []*demoWorker
	resources []string
	last      *rebalance.Description
	eps       groupwatch.Episodes
	episodes  []groupwatch.Episode
	steps     []*stepRecord
	total     int             // steps in the script
	problems  oracle.Problems // what makes the verdict FAIL
	changed   chan struct{}
}

// demoWorker is one worker process.
type demoWorker struct {
	name  string
	proxy *zkserver.Proxy
	proc  *launch.Proc
	state string // running, killed, partitioned, stopping, stopped, exited
}

// stepRecord is one step of the script as it ran.
type stepRecord struct {
	n          int
	title      string
	explain    string
	start, end time.Time
	notes      []string
	summary    string // for the summary at the end
	err        error
}

func newDemo(a *cli.App, o demoOptions) *demo {
	var b [6]byte
	_, _ = rand.Read(b[:])
	d := &demo{a: a, o: o, t0: time.Now(), runID: hex.EncodeToString(b[:]), root: rebalance.DefaultRoot,
		group: "demo", changed: make(chan struct{}, 1)}
	if len(o.zk) > 0 {
		d.group = "demo-" + d.runID
	}
	for i := 1; i <= o.resources; i++ {
		d.resources = append(d.resources, fmt.Sprintf("shard-%02d", i))
	}
	d.view = newDemoView(d, a.Stdout, o.plain)
	if !d.o.paceSet && !d.view.plain() {
		d.o.pace = 3 * time.Second
	}
	return d
}

// run plays the demo and returns its verdict.
func (d *demo) run() error {
	d.view.start()
	err := d.play()
	d.teardown()
	d.view.finish()
	return d.verdict(err)
}

// play sets everything up and runs the script.
func (d *demo) play() error {
	ctx := d.a.Ctx
	if len(d.o.zk) == 0 {
		d.logf("starting a ZooKeeper server for the demo (from the Debian package zookeeper)")
		c, err := zkserver.Launch()
		if err != nil {
			return fmt.Errorf("starting ZooKeeper (is it installed? 'make deps' installs it; or give a running server with --zk): %w", err)
		}
		d.cluster, d.servers = c, c.Servers()
		d.logf("ZooKeeper is serving at %s", strings.Join(d.servers, ","))
	} else {
		d.servers = d.o.zk
		d.logf("using ZooKeeper at %s, group %s", strings.Join(d.servers, ","), d.group)
	}
	cfg, err := d.a.Conn.Config()
	if err != nil {
		return err
	}
	cfg.Servers = d.servers
	if len(d.o.zk) == 0 {
		cfg = zkcoord.Config{Servers: d.servers}
	}
	cfg.Logger = d.a.Log
	sess, err := d.a.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	d.sess = sess
	if len(d.o.zk) > 0 {
		if _, err := rebalance.Describe(ctx, sess, zkcoord.Join(d.root, d.group)); !errors.Is(err, rebalance.ErrNoGroup) {
			return fmt.Errorf("group %s exists already", d.group)
		}
	}

	if d.o.ui != "" {
		stop, err := d.serveUI(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}

	watchCtx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		err := groupwatch.Watch(watchCtx, sess, d.root, d.group, d.onSnapshot)
		if err != nil && watchCtx.Err() == nil {
			d.problem("watching the group: %v", err)
		}
	}()
	defer func() {
		stopWatch()
		<-watchDone
	}()

	return d.script()
}

// serveUI serves the web console of the demo's ZooKeeper (the rebalancer
// groups) beside the terminal view, until the returned function is called.
func (d *demo) serveUI(ctx context.Context) (func(), error) {
	ln, err := net.Listen("tcp", d.o.ui)
	if err != nil {
		return nil, fmt.Errorf("--ui: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer ln.Close()
		announce := func(url string) { d.logf("the web console is at %s", url) }
		err := cli.ServeConsole(ctx, d.sess, ln, console.Options{Root: d.root, Logger: d.a.Log}, announce, d.a.Stderr, d.a.Log)
		if err != nil && ctx.Err() == nil {
			d.logf("the web console stopped: %v", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}

// onSnapshot records a new state of the group.
func (d *demo) onSnapshot(s groupwatch.Snapshot) {
	d.mu.Lock()
	if s.D != nil {
		d.last = s.D
	}
	e := d.eps.Observe(s)
	if e != nil {
		d.episodes = append(d.episodes, *e)
	}
	d.mu.Unlock()
	if e != nil {
		d.logRebalancing(*e, s.D)
	}
	d.notify()
}

// notify wakes whoever waits for a change, and the view.
func (d *demo) notify() {
	select {
	case d.changed <- struct{}{}:
	default:
	}
	d.view.refresh()
}

// logf records a progress line.
func (d *demo) logf(format string, args ...any) {
	d.view.line(time.Since(d.t0), fmt.Sprintf(format, args...))
}

// problem records something that makes the verdict FAIL.
func (d *demo) problem(format string, args ...any) {
	d.logf("PROBLEM: %s", d.problems.Addf(format, args...))
}

// workerTails logs the last lines each worker wrote to its standard
// error, for a person to see why a step did not complete.
func (d *demo) workerTails() {
	d.mu.Lock()
	var tails []string
	for _, w := range d.workers {
		tails = append(tails, fmt.Sprintf("  %s (%s), last lines:\n%s", w.name, w.state, lastLines(w.proc.Stderr(), 15)))
	}
	d.mu.Unlock()
	for _, t := range tails {
		d.logf("%s", t)
	}
}

func (d *demo) logRebalancing(e groupwatch.Episode, desc *rebalance.Description) {
	d.logf("rebalancing #%d took %s (%s; %d resources started or moved; coordinator %s, term %d, generation %d)",
		e.N, fmtDur(e.Duration()), e.Trigger, e.Moved, e.Coord, e.Term, e.Generation)
	if desc == nil || !d.view.plain() {
		return
	}
	for _, m := range desc.Members {
		d.logf("    %-10s %s", groupwatch.MemberName(desc, m.ID), cli.Words(m.Holding))
	}
}

// startWorker starts a worker process behind a fault proxy of its own.
func (d *demo) startWorker(name string) (*demoWorker, error) {
	p, err := zkserver.OpenProxy(d.servers)
	if err != nil {
		return nil, fmt.Errorf("starting a proxy for %s: %w", name, err)
	}
	args := []string{"rebalance", d.group, "--root", d.root, "--exec", "sleep 3600",
		"--name", name, "--events", "--zk", strings.Join(p.Servers(), ","),
		"--session-timeout", d.o.sessionTimeout.String(), "--grace", "1s", "--log-level", "warn"}
	if len(d.o.zk) > 0 {
		args = append(args, d.a.Conn.PassOn()...)
	} else {
		args = append(args, (&cli.ConnOptions{ACL: "open"}).PassOn()...)
	}
	w := &demoWorker{name: name, proxy: p, state: "running"}
	sink := d.hist.Sink(name, func(line string) {})
	proc, err := d.procs.Start(context.Background(), launch.Spec{Path: d.o.zkcoord, Args: args, Name: name,
		Env: []string{"ZKCOORD_DEMO_RUN=" + d.runID}}, func(line string) {
		sink(line)
		d.notify()
	})
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	w.proc = proc
	d.mu.Lock()
	d.workers = append(d.workers, w)
	d.mu.Unlock()
	go func() {
		<-proc.Done()
		d.mu.Lock()
		st := w.state
		if st != "killed" && st != "stopping" && st != "stopped" {
			w.state = "exited"
		}
		d.mu.Unlock()
		d.hist.Add(event.Event{Client: name, Kind: event.Exit})
		if st != "killed" && st != "stopping" && st != "stopped" {
			d.problem("%s exited unexpectedly (%v): %s", name, proc.ExitErr(), lastLines(proc.Stderr(), 5))
		}
		d.notify()
	}()
	d.logf("started %s (pid %d)", name, proc.Pid())
	return w, nil
}

// teardown stops everything the demo started, whatever happened.
func (d *demo) teardown() {
	d.mu.Lock()
	workers := slices.Clone(d.workers)
	d.mu.Unlock()
	fanout.Each(len(workers), len(workers), func(i int) {
		w := workers[i]
		if w.proc.Exited() {
			return
		}
		d.setState(w, "stopping")
		_ = w.proc.Terminate(20 * time.Second)
		d.setState(w, "stopped")
	})
	d.procs.Close()
	for _, w := range workers {
		w.proxy.Close()
	}
	if d.sess != nil {
		if len(d.o.zk) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := deleteTree(ctx, d.sess, zkcoord.Join(d.root, d.group)); err != nil {
				d.logf("could not delete the group %s: %v", d.group, err)
			}
			cancel()
		}
		cli.CloseSession(d.sess)
	}
	if d.cluster != nil {
		d.logf("stopping ZooKeeper")
		d.cluster.Close()
	}
	if left := d.leftovers(); len(left) > 0 {
		d.problem("processes left running (killed now): %v", left)
	}
}

func (d *demo) setState(w *demoWorker, st string) {
	d.mu.Lock()
	w.state = st
	d.mu.Unlock()
	d.notify()
}

// leftovers finds, and kills, processes that carry this run's mark.
func (d *demo) leftovers() []int {
	mark := "ZKCOORD_DEMO_RUN=" + d.runID
	deadline := time.Now().Add(5 * time.Second)
	for len(marked.Find(mark)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return marked.Kill(mark)
}

// deleteTree deletes a node and everything under it.
func deleteTree(ctx context.Context, sess *zkcoord.Session, path string) error {
	kids, _, err := sess.Children(ctx, path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := deleteTree(ctx, sess, zkcoord.Join(path, k)); err != nil {
			return err
		}
	}
	if err := sess.Delete(ctx, path, -1); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return err
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}
