package model

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var full = flag.Bool("model.full", false, "also run the large configurations (make model)")

// check is one verification run: a model compiled with defines, searched
// for assertion violations and invalid end states (claim empty) or for
// acceptance cycles of an LTL claim under weak fairness.
type check struct {
	name    string
	file    string
	defines []string
	claim   string
	broken  bool // a broken variant: the run must find an error
	large   bool // only with -model.full
}

func safety(name, file string, defs ...string) check {
	return check{name: name, file: file, defines: defs}
}

func ltl(name, file, claim string, defs ...string) check {
	return check{name: name, file: file, defines: defs, claim: claim}
}

func broken(name, file string, defs ...string) check {
	return check{name: name, file: file, defines: defs, broken: true}
}

func large(c check) check {
	c.large = true
	return c
}

// checks lists every configuration. The small ones keep each search to
// seconds; the large ones are what model/README.md reports.
var checks = []check{
	// The rebalancer: 3 clients, 2 resources, one fault or operator action,
	// in each mode (the global-barrier mode with 2 clients).
	safety("rebalance/incremental", "rebalance.pml", "-DFAULTS=1"),
	ltl("rebalance/incremental/balanced", "rebalance.pml", "eventually_balanced", "-DFAULTS=1"),
	ltl("rebalance/incremental/ends", "rebalance.pml", "rebalancing_ends", "-DFAULTS=1"),
	safety("rebalance/resource", "rebalance.pml", "-DMODE_RESOURCE", "-DFAULTS=1"),
	ltl("rebalance/resource/balanced", "rebalance.pml", "eventually_balanced", "-DMODE_RESOURCE", "-DFAULTS=1"),
	ltl("rebalance/resource/ends", "rebalance.pml", "rebalancing_ends", "-DMODE_RESOURCE", "-DFAULTS=1"),
	safety("rebalance/global", "rebalance.pml", "-DMODE_GLOBAL", "-DNC=2", "-DFAULTS=1"),
	broken("rebalance/broken/barrier-with-resource", "rebalance.pml", "-DBROKEN_BARRIER_WITH_RESOURCE", "-DFAULTS=1"),
	broken("rebalance/broken/barrier-with-resource/double-access", "rebalance.pml", "-DBROKEN_BARRIER_WITH_RESOURCE", "-DMUTEX_ONLY", "-DFAULTS=2"),
	broken("rebalance/broken/global-barrier-with-resource", "rebalance.pml", "-DMODE_GLOBAL", "-DBROKEN_BARRIER_WITH_RESOURCE", "-DNC=2", "-DFAULTS=1"),
	broken("rebalance/broken/no-self-expiry", "rebalance.pml", "-DNO_SELF_EXPIRY", "-DFAULTS=1"),
	broken("rebalance/broken/no-term-check", "rebalance.pml", "-DNO_TERM_CHECK", "-DFAULTS=1"),
	broken("rebalance/broken/no-stop-before-delete", "rebalance.pml", "-DNO_STOP_BEFORE_DELETE", "-DFAULTS=1"),

	// The election: 3 candidates, two faults or user actions.
	safety("election", "election.pml", "-DFAULTS=2"),
	ltl("election/leader", "election.pml", "eventually_leader", "-DFAULTS=1"),
	broken("election/broken/no-self-expiry", "election.pml", "-DNO_SELF_EXPIRY", "-DFAULTS=2"),
	broken("election/broken/no-term-check", "election.pml", "-DNO_TERM_CHECK", "-DFAULTS=2"),
	broken("election/broken/no-recheck", "election.pml", "-DNO_RECHECK", "-DFAULTS=2"),

	// The mutex: 3 clients, two faults or user actions.
	safety("lock", "lock.pml", "-DFAULTS=2"),
	ltl("lock/served", "lock.pml", "all_served", "-DFAULTS=1"),
	broken("lock/broken/no-self-expiry", "lock.pml", "-DNO_SELF_EXPIRY", "-DFAULTS=2"),
	broken("lock/broken/no-relist", "lock.pml", "-DNO_RELIST", "-DFAULTS=2"),

	// The mutex's lock-delay, timed: 2 clients, pauses of at most PAUSE
	// ticks, stale holders counted (no fencing). The delay must be longer
	// than the pause.
	safety("lock/delay", "lock.pml", "-DTIMED", "-DNC=2", "-DDELAY=2", "-DPAUSE=1", "-DFAULTS=2"),
	broken("lock/broken/delay-not-longer-than-pause", "lock.pml", "-DTIMED", "-DNC=2", "-DDELAY=1", "-DPAUSE=1", "-DFAULTS=2"),
	broken("lock/broken/no-lock-delay", "lock.pml", "-DTIMED", "-DNC=2", "-DPAUSE=1", "-DFAULTS=2"),
	broken("lock/broken/no-arrival-check", "lock.pml", "-DTIMED", "-DNC=2", "-DDELAY=2", "-DPAUSE=1", "-DNO_ARRIVAL_CHECK", "-DFAULTS=2"),

	// The rebalancer's lock-delay on its barriers, kept by the handover
	// marks, timed: one resource, pauses of at most PAUSE ticks, stale
	// owners counted (no fencing). The delay must be longer than the
	// pause, the take must check the mark's version, the release must
	// mark in the transaction that deletes the barrier, that
	// transaction must check the mark, and only a takeover that was clean
	// or waited its delay out may mark.
	safety("handover", "handover.pml", "-DNC=3", "-DDELAY=2", "-DPAUSE=1", "-DFAULTS=2"),
	broken("handover/broken/delay-not-longer-than-pause", "handover.pml", "-DDELAY=1", "-DPAUSE=1", "-DFAULTS=2"),
	broken("handover/broken/no-lock-delay", "handover.pml", "-DPAUSE=1", "-DFAULTS=2"),
	broken("handover/broken/no-version-check", "handover.pml", "-DDELAY=2", "-DPAUSE=1", "-DNO_VERSION_CHECK", "-DFAULTS=2"),
	broken("handover/broken/split-release", "handover.pml", "-DDELAY=2", "-DPAUSE=1", "-DSPLIT_RELEASE", "-DFAULTS=2"),
	broken("handover/broken/mark-cancelled", "handover.pml", "-DDELAY=2", "-DPAUSE=1", "-DMARK_CANCELLED", "-DFAULTS=2"),
	broken("handover/broken/unguarded-release", "handover.pml", "-DDELAY=2", "-DPAUSE=1", "-DUNGUARDED_RELEASE", "-DFAULTS=3"),

	// The work queue's claims: 2 items, 2 takers sharing a session (3
	// takers: a second session), faults: lost requests and replies, a
	// Take's context ending mid-claim, crashes, pauses.
	safety("queue", "queue.pml", "-DFAULTS=3"),
	safety("queue/3takers", "queue.pml", "-DNT=3", "-DFAULTS=2"),
	ltl("queue/acked", "queue.pml", "all_acked", "-DFAULTS=2"),
	broken("queue/broken/caller-ctx", "queue.pml", "-DCALLER_CTX", "-DFAULTS=2"),
	broken("queue/broken/shared-tag", "queue.pml", "-DSHARED_TAG", "-DFAULTS=2"),

	// Large configurations (make model).
	large(safety("large/rebalance/incremental", "rebalance.pml", "-DFAULTS=2")),
	large(safety("large/rebalance/resource", "rebalance.pml", "-DMODE_RESOURCE", "-DFAULTS=2")),
	large(safety("large/rebalance/global", "rebalance.pml", "-DMODE_GLOBAL", "-DFAULTS=1")),
	large(safety("large/rebalance/incremental-3r", "rebalance.pml", "-DNR=3", "-DFAULTS=1")),
	large(safety("large/rebalance/resource-3r", "rebalance.pml", "-DMODE_RESOURCE", "-DNR=3", "-DFAULTS=1")),
	large(ltl("large/rebalance/incremental/balanced", "rebalance.pml", "eventually_balanced", "-DNC=2", "-DFAULTS=2")),
	large(ltl("large/rebalance/resource/balanced", "rebalance.pml", "eventually_balanced", "-DMODE_RESOURCE", "-DNC=2", "-DFAULTS=2")),
	large(ltl("large/rebalance/global/balanced", "rebalance.pml", "eventually_balanced", "-DMODE_GLOBAL", "-DFAULTS=1")),
	large(ltl("large/rebalance/global/ends", "rebalance.pml", "rebalancing_ends", "-DMODE_GLOBAL", "-DFAULTS=1")),
	large(safety("large/election", "election.pml", "-DFAULTS=3")),
	large(ltl("large/election/leader", "election.pml", "eventually_leader", "-DFAULTS=2")),
	large(safety("large/lock", "lock.pml", "-DFAULTS=3")),
	large(ltl("large/lock/served", "lock.pml", "all_served", "-DFAULTS=2")),
	large(safety("large/lock/delay", "lock.pml", "-DTIMED", "-DDELAY=3", "-DPAUSE=2", "-DFAULTS=2")),
	large(safety("large/handover", "handover.pml", "-DNC=3", "-DDELAY=3", "-DPAUSE=2", "-DFAULTS=3")),
	large(safety("large/queue", "queue.pml", "-DNT=3", "-DFAULTS=4")),
	large(safety("large/queue/3items", "queue.pml", "-DNT=3", "-DNI=3", "-DFAULTS=3")),
	large(ltl("large/queue/acked", "queue.pml", "all_acked", "-DNT=3", "-DFAULTS=2")),
}

// TestModels verifies every correct configuration and requires a
// counterexample trail from every broken variant.
func TestModels(t *testing.T) {
	programs(t)
	for _, c := range checks {
		if c.large && !*full {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := verify(t, c)
			what := "safety"
			if c.claim != "" {
				what = "ltl " + c.claim
			}
			t.Logf("%s %s (%s): %d states, %d transitions, %.0f MB, %v, errors %d",
				c.file, strings.Join(c.defines, " "), what, r.states, r.transitions, r.memory, r.elapsed.Round(10*time.Millisecond), r.errors)
			switch {
			case c.broken && r.errors == 0:
				t.Fatalf("broken variant verified; want a counterexample\n%s", r.output)
			case c.broken:
				replay(t, r, c)
			case r.errors != 0:
				t.Fatalf("%d errors; the trail says:\n%s", r.errors, trail(t, r, c))
			}
		})
	}
}

// programs fails (CI) or skips the test when Spin or a C compiler is missing.
func programs(t *testing.T) {
	t.Helper()
	for _, prog := range []string{"spin", "gcc"} {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found (make deps installs it): %v", prog, err)
			}
			t.Skipf("%s not found (make deps installs it)", prog)
		}
	}
}

// result is what one verifier run reported.
type result struct {
	dir         string
	errors      int
	states      int64
	transitions int64
	memory      float64
	elapsed     time.Duration
	output      string
}

var (
	errorsRE      = regexp.MustCompile(`errors: (\d+)`)
	storedRE      = regexp.MustCompile(`([0-9.e+]+) states, stored`)
	transitionsRE = regexp.MustCompile(`([0-9.e+]+) transitions`)
	memoryRE      = regexp.MustCompile(`([0-9.]+)\s+total actual memory usage`)
)

// verify generates, compiles and runs the verifier of c in a fresh
// directory.
func verify(t *testing.T, c check) result {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(c.file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, c.file), src, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "spin", append(append([]string{"-a"}, c.defines...), c.file)...)

	// Small runs compile quickly; large ones run long, so they are
	// optimised and store states compressed (COLLAPSE, lossless).
	cflags := []string{"-O1", "-o", "pan", "pan.c"}
	hash := "-w20"
	if c.large {
		cflags = []string{"-O2", "-DCOLLAPSE", "-o", "pan", "pan.c"}
		hash = "-w24"
	}
	args := []string{hash, "-m1000000"}
	if c.claim == "" {
		cflags = append([]string{"-DSAFETY", "-DNOCLAIM"}, cflags...)
	} else {
		// Weak fairness needs room for every process (NFAIR).
		cflags = append([]string{"-DNFAIR=4"}, cflags...)
		args = append(args, "-a", "-f", "-N", c.claim)
	}
	run(t, dir, "gcc", cflags...)

	start := time.Now()
	cmd := exec.Command("./pan", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	r := result{dir: dir, elapsed: time.Since(start), output: string(out)}
	if err != nil {
		t.Fatalf("pan %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m := errorsRE.FindStringSubmatch(r.output)
	if m == nil {
		t.Fatalf("pan reported no error count:\n%s", out)
	}
	r.errors, _ = strconv.Atoi(m[1])
	r.states = number(storedRE, r.output)
	r.transitions = number(transitionsRE, r.output)
	if m := memoryRE.FindStringSubmatch(r.output); m != nil {
		r.memory, _ = strconv.ParseFloat(m[1], 64)
	}
	if r.errors == 0 && strings.Contains(r.output, "max search depth too small") {
		t.Fatalf("search truncated by the depth limit; a verification must be exhaustive:\n%s", out)
	}
	return r
}

func number(re *regexp.Regexp, s string) int64 {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	return int64(f)
}

// replay requires the trail of a counterexample and that Spin can play it
// back.
func replay(t *testing.T, r result, c check) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(r.dir, c.file+".trail")); err != nil {
		t.Fatalf("errors but no trail: %v\n%s", err, r.output)
	}
	out := trail(t, r, c)
	if !strings.Contains(out, "violated") && !strings.Contains(out, "CYCLE") {
		t.Fatalf("the trail replays without a violation:\n%s", out)
	}
	t.Logf("counterexample (last steps):\n%s", tail(out, 12))
}

// trail plays the counterexample back, one line per step.
func trail(t *testing.T, r result, c check) string {
	t.Helper()
	args := append(append([]string{"-t", "-p", "-k", c.file + ".trail"}, c.defines...), c.file)
	cmd := exec.Command("spin", args...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("spin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return steps(string(out))
}

// steps keeps the first line of each step of a replayed trail, and the
// lines that report a violation.
var stepRE = regexp.MustCompile(`^\s*(\d+):\s+proc`)

func steps(out string) string {
	var b strings.Builder
	last := ""
	for _, line := range strings.Split(out, "\n") {
		if m := stepRE.FindStringSubmatch(line); m != nil {
			if m[1] == last || strings.Contains(line, ":init:") {
				continue
			}
			last = m[1]
			fmt.Fprintln(&b, strings.TrimSpace(line))
			continue
		}
		if strings.Contains(line, "violated") || strings.Contains(line, "CYCLE") {
			fmt.Fprintln(&b, strings.TrimSpace(line))
		}
	}
	return b.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
