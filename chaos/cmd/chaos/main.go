// Command chaos runs zkcoord under injected faults and checks what the
// clients did: a 3-server ZooKeeper ensemble, K client processes, M
// resources and a fenced resource service, with a seeded, reproducible
// fault schedule. See package github.com/zkcoord/zkcoord/chaos.
//
//	go run ./chaos/cmd/chaos -workload rebalance-incremental -duration 10m -seed 42
//
// For every workload it prints a one-line verdict and writes, under -out,
// <workload>-seed<seed>.json (the report and the whole history) and
// <workload>-seed<seed>.html (the timeline), plus the clients' logs. It
// exits with status 1 if any workload failed.
//
// The same binary is also the service and the clients ("chaos service ...",
// "chaos client ..."): the harness starts itself in those roles.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zkcoord/zkcoord/chaos"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == chaos.RoleClient || os.Args[1] == chaos.RoleService || os.Args[1] == chaos.RoleUse) {
		os.Exit(chaos.ChildMain(os.Args[1], os.Args[2:]))
	}
	os.Exit(run())
}

func run() int {
	workload := flag.String("workload", "rebalance-incremental",
		"rebalance-incremental, rebalance-resource, rebalance-global, election, lock, cli, queue, recovery, counter, discovery, or all")
	duration := flag.Duration("duration", 10*time.Minute, "how long to inject faults (per workload)")
	seed := flag.Uint64("seed", 42, "seed of the fault schedule")
	clients := flag.Int("clients", 4, "clients at the start (for -workload cli: 6, two of each zkcoord command)")
	resources := flag.Int("resources", 0, "resources at the start (default 10 for the rebalancer, 3 otherwise)")
	timeout := flag.Duration("session-timeout", 4*time.Second, "the clients' session timeout")
	out := flag.String("out", "chaos-out", "directory for reports, timelines and logs")
	bug := flag.String("bug", "", "give client c1 a bug, to see the checkers catch it: "+chaos.BugLateStop+
		"; for -workload cli, give every zkcoord a known broken behaviour back: "+chaos.BugGrace+", "+chaos.BugPdeathsig+", "+chaos.BugGroupKill+
		" or "+chaos.BugMixedKinds+" (c1 takes the lock with --read, the other lock clients as a mutex, and zkcoord lets both hold)"+
		"; for -workload queue: "+chaos.BugAckFirst+" (c1 acknowledges items before processing them) or "+
		chaos.BugClaimCallerCtx+" (c1's takes leave behind claims whose deadline expired in flight)"+
		"; for -workload counter: "+chaos.BugValueSettle+" (every writer settles lost writes by equal data, as zkcoord once did)")
	lockDelay := flag.Duration("lock-delay", 0, "lock-delay of the clients' locks, elections and rebalancers' barrier takeovers (lock, election, recovery and rebalance workloads)")
	unfenced := flag.Bool("unfenced", false, "judge as if resources ignored fencing tokens: every overlap of two holders is a violation, also after a pause")
	plan := flag.Int("plan", 0, "print the first N faults of the schedule for -seed and exit")
	quiet := flag.Bool("q", false, "print only the verdicts")
	summarize := flag.Bool("summarize", false, "print the figures of the JSON reports named as arguments and exit")
	flag.Parse()
	if *summarize {
		return printSummaries(flag.Args())
	}

	var workloads []chaos.Workload
	if *workload == "all" {
		workloads = chaos.Workloads()
	} else {
		w, err := chaos.ParseWorkload(*workload)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		workloads = []chaos.Workload{w}
	}
	clientsSet := false
	flag.Visit(func(f *flag.Flag) { clientsSet = clientsSet || f.Name == "clients" })
	base := chaos.Options{Seed: *seed, Duration: *duration, Clients: *clients, Resources: *resources,
		SessionTimeout: *timeout, Bug: *bug, LockDelay: *lockDelay, Unfenced: *unfenced, Spawn: spawn}
	if *plan > 0 {
		return printPlan(workloads, base, *plan)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var log io.Writer = os.Stderr
	if *quiet {
		log = nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	zk, stopZK, err := chaos.StartCluster(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting ZooKeeper:", err)
		if errors.Is(err, chaos.ErrNoZooKeeper) {
			fmt.Fprintln(os.Stderr, "install it with: make deps")
		}
		return 1
	}
	defer stopZK()

	failed := false
	for _, w := range workloads {
		if ctx.Err() != nil {
			break
		}
		o := base
		o.Workload = w
		o.Log = log
		if w == chaos.CLI && !clientsSet {
			o.Clients = 0 // its own default: two clients of each zkcoord command
		}
		name := fmt.Sprintf("%s-seed%d", w, *seed)
		o.Dir = filepath.Join(*out, name+"-logs")
		os.RemoveAll(o.Dir)
		rep, err := chaos.Run(ctx, zk, o)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", w, err)
			failed = true
			continue
		}
		rep.Command = command(w, *duration, *seed, *clients, *resources, *timeout, *bug, *lockDelay, *unfenced)
		if err := write(filepath.Join(*out, name+".json"), rep.WriteJSON); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		if err := write(filepath.Join(*out, name+".html"), rep.WriteTimeline); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		if log != nil {
			rep.WriteSummary(os.Stderr)
		}
		fmt.Println(rep.Verdict)
		if !rep.Pass {
			failed = true
			for _, v := range rep.Violations {
				fmt.Println("  violation:", v)
			}
			for _, p := range rep.Problems {
				fmt.Println("  problem:", firstLine(p))
			}
		}
		if log != nil {
			fmt.Fprintf(os.Stderr, "report %s, timeline %s\n", filepath.Join(*out, name+".json"), filepath.Join(*out, name+".html"))
		}
	}
	if failed || ctx.Err() != nil {
		return 1
	}
	return 0
}

// spawn starts this binary again in a child role.
func spawn(name, role string, args []string) launch.Spec {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return launch.Spec{Path: exe, Args: append([]string{role}, args...), Name: name}
}

// raceFlag is " -race" in a binary built with the race detector.
var raceFlag string

func command(w chaos.Workload, d time.Duration, seed uint64, clients, resources int, timeout time.Duration, bug string,
	lockDelay time.Duration, unfenced bool) string {
	c := fmt.Sprintf("go run%s ./chaos/cmd/chaos -workload %s -duration %v -seed %d", raceFlag, w, d, seed)
	if clients != 4 {
		c += fmt.Sprintf(" -clients %d", clients)
	}
	if resources != 0 {
		c += fmt.Sprintf(" -resources %d", resources)
	}
	if timeout != 4*time.Second {
		c += fmt.Sprintf(" -session-timeout %v", timeout)
	}
	if bug != "" {
		c += " -bug " + bug
	}
	if lockDelay > 0 {
		c += fmt.Sprintf(" -lock-delay %v", lockDelay)
	}
	if unfenced {
		c += " -unfenced"
	}
	return c
}

func write(path string, f func(io.Writer) error) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f(file); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

func printPlan(workloads []chaos.Workload, o chaos.Options, n int) int {
	for _, w := range workloads {
		o.Workload = w
		faults, err := chaos.Plan(o, n)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Printf("%s, seed %d:\n", w, o.Seed)
		for i, f := range faults {
			fmt.Printf("  #%d after %v: %s\n", i+1, f.Wait, f)
		}
	}
	return 0
}

func printSummaries(files []string) int {
	status := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		var rep chaos.Report
		if err == nil {
			err = json.Unmarshal(data, &rep)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			status = 1
			continue
		}
		rep.WriteSummary(os.Stdout)
		fmt.Println()
	}
	return status
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
