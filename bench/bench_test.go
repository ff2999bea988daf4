//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// env is what the suites share: the peers and the run's settings.
type env struct {
	quick   bool
	javaDir string   // compiled Curator peer
	set     *setting // the setting being measured
	curator *peer    // the peers of that setting
	kazoo   *peer
}

// peers returns the long-lived peers that started.
func (e *env) peers() []*peer {
	var out []*peer
	for _, p := range []*peer{e.curator, e.kazoo} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

type peerStarter struct {
	name  string
	start func(ctx context.Context) (*peer, error)
}

// peerStarters start fresh peer processes (for memory measurements).
func (e *env) peerStarters() []peerStarter {
	var out []peerStarter
	if e.curator != nil {
		out = append(out, peerStarter{curatorName, func(ctx context.Context) (*peer, error) {
			return startCurator(ctx, e.javaDir)
		}})
	}
	if e.kazoo != nil {
		out = append(out, peerStarter{kazooName, startKazoo})
	}
	return out
}

func (e *env) close() {
	for _, p := range e.peers() {
		p.close()
	}
	e.curator, e.kazoo = nil, nil
}

// startPeers starts the Curator and Kazoo peers of the active setting,
// each connecting through its own proxy outside loopback. A peer that
// does not start is missing from the setting's tables, and the failure
// is recorded.
func (e *env) startPeers(ctx context.Context, res *results) {
	failed := func(name string, err error) {
		res.mu.Lock()
		defer res.mu.Unlock()
		res.errs["peers"] = append(res.errs["peers"],
			fmt.Sprintf("%s could not start, so it is missing from the tables of setting %q: %v", name, e.set.name(), err))
	}
	if e.javaDir != "" {
		if p, err := startCurator(ctx, e.javaDir); err != nil {
			failed(curatorName, err)
		} else {
			e.curator = p
		}
	}
	if p, err := startKazoo(ctx); err != nil {
		failed(kazooName, err)
	} else {
		e.kazoo = p
	}
}

// suites lists the suites of the active setting, in order.
func suites(e *env) []*suite {
	if !e.set.loopback() {
		out := []*suite{floorSuite(e), lockSuite(e), handoffSuite(e)}
		for _, sz := range failoverSizes(e.quick, e.set) {
			out = append(out, failoverSuite(e, sz))
		}
		for _, sz := range rebalanceSizes(e.quick, e.set) {
			out = append(out, rebalanceSuite(e, sz))
		}
		if e.set.delay == crashDelay {
			out = append(out, crashSuites(e)...)
		}
		return append(out, cacheSuite(e))
	}
	out := []*suite{floorSuite(e), lockSuite(e), handoffSuite(e), distinctSuite(e)}
	for _, sz := range failoverSizes(e.quick, e.set) {
		out = append(out, failoverSuite(e, sz))
	}
	for _, sz := range rebalanceSizes(e.quick, e.set) {
		out = append(out, rebalanceSuite(e, sz))
	}
	out = append(out, queueSuites(e)...)
	return append(out, cacheSuite(e), memorySuite(e))
}

// implOrder is the order of implementations in tables.
func implOrder() []string {
	order := []string{zkcoordName}
	for _, m := range rebalanceModes {
		order = append(order, zkcoordName+" "+m.String())
	}
	order = append(order, zkcoordName+" election", zkcoordName+" failover")
	order = append(order, zkQueueName, zkQueueNName, zkWorkName, zkWorkNName, zkCuratorName, zkCuratorLName, zkCacheName)
	return append(order, gozkName, curatorName, curatorName+" LeaderLatch", curatorQueueName, curatorCacheName,
		kazooName, kazooName+" Election", "Kazoo SetPartitioner", kazooQueueName, kazooLockingName, kazooCacheName)
}

const defaultCommand = "cd bench && go test -tags bench -run '^TestBench$' -timeout 60m -v ."

// TestBench runs every suite and writes the report. It is a test only so
// that it can use zktest; it checks nothing.
func TestBench(t *testing.T) {
	if *flagRender {
		if err := renderAgain(*flagOut); err != nil {
			t.Fatal(err)
		}
		return
	}
	start := time.Now()
	loadAtStart := loadAverage()
	// zkcoord's calls get a context that can be cancelled, as a service's
	// calls would (a context without Done takes a shorter path).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := &env{quick: *flagQuick, javaDir: t.TempDir()}
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetOutput(os.Stderr)

	res := newResults()
	if err := compileCurator(ctx, e.javaDir); err != nil {
		t.Errorf("Curator peer: %v", err)
		res.errs["peers"] = append(res.errs["peers"], fmt.Sprintf("Curator could not be compiled, so it is missing from every table: %v", err))
		e.javaDir = ""
	}
	var only *regexp.Regexp
	if *flagOnly != "" {
		only = regexp.MustCompile(*flagOnly)
	}
	// runSetting runs the suites of the active setting that -bench.only
	// selects, with that setting's peers.
	runSetting := func(set *setting) error {
		activate(set)
		e.set = set
		selected := func() []*suite {
			var todo []*suite
			for _, s := range suites(e) {
				if only == nil || only.MatchString(s.id) {
					todo = append(todo, s)
				}
			}
			return todo
		}
		if len(selected()) == 0 {
			return nil
		}
		log.Printf("bench: setting %s", set.name())
		e.startPeers(ctx, res)
		defer e.close()
		todo := selected() // now with the peers
		if err := warmServer(ctx, e.quick); err != nil {
			return fmt.Errorf("warming the server up: %w", err)
		}
		for _, s := range todo {
			s.run(ctx, res)
		}
		return nil
	}
	loop := active
	if err := runSetting(loop); err != nil {
		t.Fatal(err)
	}
	if !*flagNoDelay {
		ens, err := launchEnsemble()
		if err != nil {
			t.Fatalf("starting the ensemble: %v", err)
		}
		// Warm the ensemble's JITs up straight, without the delay, so that
		// the first delayed setting does not pay for their compiling.
		activate(&setting{cluster: ens})
		if err := warmServer(ctx, e.quick); err != nil {
			ens.Close()
			t.Fatalf("warming the ensemble up: %v", err)
		}
		for _, d := range delayedDelays {
			if err := runSetting(&setting{id: delayID(d), delay: d, cluster: ens}); err != nil {
				ens.Close()
				t.Fatal(err)
			}
		}
		ens.Close()
		activate(loop)
	}

	rep := &report{
		Date:     start.UTC().Format("2006-01-02 15:04 MST"),
		Command:  command(),
		Quick:    e.quick,
		Elapsed:  time.Since(start).Round(time.Second).String(),
		Machine:  machine(loadAtStart),
		Versions: versions(ctx),
		Failures: res.errs,
	}
	defs := metricDefs(e.quick)
	rep.Metrics = buildMetrics(res, defs, implOrder())
	if *flagMerge {
		merged, err := mergeInto(*flagOut, rep, defs)
		if err != nil {
			t.Fatal(err)
		}
		rep = merged
	}
	if err := writeReport(rep, defs, *flagOut); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(filepath.Join(*flagOut, "benchmarks.md"))
	t.Logf("report written to %s after %v", abs, time.Since(start).Round(time.Second))
	for id, fs := range res.errs {
		if id == "peers" {
			continue // already reported
		}
		for _, f := range fs {
			t.Errorf("%s: %s", id, f)
		}
	}
}

// renderAgain rewrites the charts and benchmarks.md from the results of
// an earlier run, for example after bench/findings.md changed.
func renderAgain(outDir string) error {
	b, err := os.ReadFile(filepath.Join(outDir, "bench", "results.json"))
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return err
	}
	return writeReport(&rep, metricDefs(rep.Quick), outDir)
}

// warmServer sends the server a few tens of thousands of requests, so
// that its JIT has compiled the request path before anything is measured.
func warmServer(ctx context.Context, quick bool) error {
	conn, err := connectRaw(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	dir := freshPath("warm", "warm")
	if err := ensureRaw(conn, dir); err != nil {
		return err
	}
	n := 1500
	switch {
	case quick:
		n = 100
	case !active.loopback():
		n = 200 // every request waits for the delay: enough for the JIT
	}
	t := time.Now()
	err = forEach(ctx, 8, 8, func(ctx context.Context, i int) error {
		for j := 0; j < n; j++ {
			p, err := conn.Create(dir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				return err
			}
			if _, _, err := conn.Children(dir); err != nil {
				return err
			}
			if _, _, err := conn.Get(p); err != nil {
				return err
			}
			if err := conn.Delete(p, -1); err != nil {
				return err
			}
		}
		return nil
	})
	log.Printf("bench: server warmed up with %d requests in %v", 8*n*4, time.Since(t).Round(time.Millisecond))
	return err
}

// startCurator starts the Curator peer for the active setting.
func startCurator(ctx context.Context, javaDir string) (*peer, error) {
	connect, err := peerConnect()
	if err != nil {
		return nil, err
	}
	return startPeer(ctx, curatorName, "java", javaArgs(javaDir, "ZkBench", connect)...)
}

// compileCurator compiles the Curator peer into dir.
func compileCurator(ctx context.Context, dir string) error {
	src, err := filepath.Abs(filepath.Join(peerDir, "ZkBench.java"))
	if err != nil {
		return err
	}
	return runJavac(ctx, dir, src)
}

func command() string {
	if c := strings.TrimSpace(os.Getenv("ZKBENCH_COMMAND")); c != "" {
		return c
	}
	// The flags that shape a run are part of its command.
	var args []string
	if *flagQuick {
		args = append(args, "-bench.quick")
	}
	if *flagOnly != "" {
		args = append(args, "-bench.only='"+*flagOnly+"'")
	}
	if *flagNoDelay {
		args = append(args, "-bench.nodelay")
	}
	if *flagMerge {
		args = append(args, "-bench.merge")
	}
	if len(args) == 0 {
		return defaultCommand
	}
	return defaultCommand + " -args " + strings.Join(args, " ")
}

// loadAverage returns the load averages over 1, 5 and 15 minutes, as
// uptime shows them: the machine may be shared.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// machine describes the computer the run used.
func machine(loadAtStart string) map[string]string {
	m := map[string]string{"cores": strconv.Itoa(runtime.NumCPU()), "load at start": loadAtStart, "load at end": loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m["cpu"] = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m["memory"] = strconv.FormatFloat(kb/1024/1024, 'f', 1, 64) + " GiB"
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m["kernel"] = "Linux " + strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				m["os"] = strings.Trim(v, `"`)
			}
		}
	}
	return m
}

// versions lists the software measured and measuring.
func versions(ctx context.Context) map[string]string {
	out := map[string]string{"Go": runtime.Version(), "ZooKeeper (server)": serverVersion(ctx)}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/go-zookeeper/zk" {
				out["go-zookeeper/zk"] = d.Version
			}
		}
	}
	run := func(name string, args ...string) string {
		b, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			return "unknown"
		}
		return strings.TrimSpace(strings.Split(string(b), "\n")[0])
	}
	out["Curator (Debian libcurator-recipes-java)"] = run("dpkg-query", "-W", "-f=${Version}", "libcurator-recipes-java")
	out["Kazoo"] = run(python(), "-c", "import kazoo.version; print(kazoo.version.__version__)")
	out["Java"] = run("java", "-version")
	out["Python"] = run(python(), "--version")
	rev := run("git", "rev-parse", "--short", "HEAD")
	if st := run("git", "status", "--porcelain", "--untracked-files=no"); st != "" && st != "unknown" {
		rev += " (with uncommitted changes)"
	}
	out["zkcoord"] = rev
	return out
}
