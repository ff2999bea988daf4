package chaos_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/chaos"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/zktest"
)

// logWriter sends a run's progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// T is the session timeout of the short runs; the fault lengths below are
// relative to it (self-expiry at 2/3 T).
const T = 4 * time.Second

// shortRuns are the schedules of the short runs in `go test`: few clients,
// a fixed list of faults per workload chosen to finish fast and never
// flake, together covering every kind of fault. The long, seeded runs are
// `make chaos`.
var shortRuns = map[chaos.Workload][]chaos.Fault{
	chaos.RebalanceIncremental: {
		{Kind: chaos.KillClient, Pick: 0, Dur: 500 * time.Millisecond},
		{Kind: chaos.PauseLong, Pick: 1, Dur: 3 * T / 2}, // past the session: fencing
		{Kind: chaos.AddResource},
	},
	chaos.RebalanceResource: {
		{Kind: chaos.PartitionLong, Pick: 2, Dur: 3 * T / 2},
		{Kind: chaos.AddClient},
		{Kind: chaos.RemoveResource, Pick: 3},
	},
	chaos.RebalanceGlobal: {
		{Kind: chaos.KillFollower, Dur: time.Second},
		{Kind: chaos.Storm, Sub: []chaos.Fault{
			{Kind: chaos.PartitionShort, Pick: 0, Dur: T / 4},
			{Kind: chaos.PauseShort, Pick: 1, Dur: T / 4, Wait: 200 * time.Millisecond},
		}},
		{Kind: chaos.RemoveClient, Pick: 2},
	},
	chaos.Election: {
		{Kind: chaos.KillLeader, Dur: time.Second},
		{Kind: chaos.PauseMedium, Pick: 0, Dur: 4 * T / 5},
		{Kind: chaos.PauseLeader, Dur: T / 4},
	},
	chaos.CLI: {
		{Kind: chaos.KillClient, Pick: 2},
		{Kind: chaos.TermPartitioned, Pick: 0, Dur: 3 * T / 2},
		{Kind: chaos.PartitionPartial, Pick: 1 + 1<<4, Dur: 2 * T},
	},
	chaos.Lock: {
		{Kind: chaos.PartitionMedium, Pick: 1, Dur: 4 * T / 5},
		{Kind: chaos.PauseLong, Pick: 2, Dur: 3 * T / 2},
		{Kind: chaos.PauseFollower, Dur: T / 4},
		{Kind: chaos.PartitionShort, Pick: 0, Dur: T / 4},
		{Kind: chaos.PauseShort, Pick: 0, Dur: T / 4},
	},
	chaos.Queue: {
		{Kind: chaos.KillClient, Pick: 0, Dur: 500 * time.Millisecond},
		{Kind: chaos.PauseLong, Pick: 1, Dur: 3 * T / 2}, // mid-item, past the session
		{Kind: chaos.PartitionMedium, Pick: 2, Dur: 4 * T / 5},
	},
	chaos.Counter: {
		{Kind: chaos.PartitionShort, Pick: 0, Dur: T / 6}, // replies cut off, same Session
		{Kind: chaos.KillLeader, Dur: time.Second},
		{Kind: chaos.PartitionMedium, Pick: 1, Dur: 4 * T / 5}, // Session lost with writes in flight
	},
	chaos.Discovery: {
		{Kind: chaos.PartitionLong, Pick: 0, Dur: 3 * T / 2}, // expired: registered and served anew
		{Kind: chaos.PauseShort, Pick: 1, Dur: T / 4},
		{Kind: chaos.KillClient, Pick: 2, Dur: 500 * time.Millisecond},
	},
	chaos.Recovery: {
		{Kind: chaos.PartitionLong, Pick: 0, Dur: 3 * T / 2}, // expired: recovered on a new Session
		{Kind: chaos.PauseLong, Pick: 1, Dur: 3 * T / 2},
		{Kind: chaos.KillFollower, Dur: time.Second},
	},
}

func shortOptions(t *testing.T, w chaos.Workload, faults []chaos.Fault) chaos.Options {
	o := chaos.Options{Workload: w, Seed: 1, Faults: faults, Clients: 3, MinClients: 2, MaxClients: 4,
		SessionTimeout: T, Settle: 2 * time.Second, Spawn: spawn, Log: logWriter{t}, Dir: t.TempDir()}
	if w == chaos.RebalanceIncremental || w == chaos.RebalanceResource || w == chaos.RebalanceGlobal {
		o.Resources, o.MinResources, o.MaxResources = 6, 4, 8
	}
	return o
}

// TestShortRuns runs every workload through a short fixed schedule and
// expects a passing verdict: no double access accepted, convergence after
// every fault, the right final state, no client giving up.
func TestShortRuns(t *testing.T) {
	zk := cluster(t)
	for _, w := range chaos.Workloads() {
		t.Run(string(w), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			rep, err := chaos.Run(ctx, zk, shortOptions(t, w, shortRuns[w]))
			if err != nil {
				t.Fatal(err)
			}
			t.Log(rep.Verdict)
			if os.Getenv("CHAOS_KEEP") != "" {
				dump(t, rep)
			}
			if !rep.Pass {
				dump(t, rep)
				t.Fatalf("verdict: %s\nviolations: %v\nproblems: %v", rep.Verdict, rep.Violations, rep.Problems)
			}
			if w == chaos.Counter {
				if c := rep.Stats.Counter; c == nil || c.Adds == 0 || c.Creates == 0 || c.Updates == 0 {
					t.Fatalf("nothing written: %+v", rep.Stats.Counter)
				}
			} else if d := rep.Stats.Discovery; d != nil {
				if d.Replacements == 0 || d.Reports == 0 {
					t.Fatalf("nothing registered again or served: %+v", d)
				}
			} else if rep.Stats.Uses == 0 || rep.Stats.Acquires == 0 {
				t.Fatalf("nothing used: %+v", rep.Stats)
			}
			if rep.Stats.Faults != len(shortRuns[w]) {
				t.Fatalf("%d faults run, want %d", rep.Stats.Faults, len(shortRuns[w]))
			}
		})
	}
}

// TestCheckerCatchesBrokenClient gives client c1 the late-stop bug (when
// told to give a resource up it lets the library hand the resource on at
// once, but goes on using it for a while) and checks that the verdict
// fails with double accesses: the checker is not blind.
func TestCheckerCatchesBrokenClient(t *testing.T) {
	zk := cluster(t)
	for _, w := range []chaos.Workload{chaos.RebalanceIncremental, chaos.Election} {
		t.Run(string(w), func(t *testing.T) {
			// Rebalancer: c1 starts alone with every resource, then c2
			// joins and takes its share. Election: c1 and c2 campaign for
			// one election and every leader resigns after at most 4s, so
			// within 10s c1 has handed leadership to c2 at least once.
			o := shortOptions(t, w, []chaos.Fault{{Kind: chaos.AddClient}})
			o.Clients, o.MinClients, o.MaxClients = 1, 1, 2
			o.Resources, o.MinResources, o.MaxResources = 4, 2, 4
			if w == chaos.Election {
				o.Faults[0].Wait = 10 * time.Second
				o.Clients, o.MaxClients = 2, 3
				o.Resources, o.MinResources, o.MaxResources = 1, 1, 1
			}
			o.Bug = chaos.BugLateStop
			rep := runBroken(t, zk, o, "a broken client")
			overlaps := 0
			for _, v := range rep.Violations {
				if v.Kind == "overlap" && v.ClientA == "c1" {
					overlaps++
				}
			}
			if overlaps == 0 {
				t.Fatalf("no overlap by the broken client c1 reported: %v", rep.Violations)
			}
			if !strings.HasPrefix(rep.Verdict, "FAIL") || strings.Contains(rep.Verdict, " 0 double accesses") {
				t.Fatalf("verdict %q", rep.Verdict)
			}
			var page bytes.Buffer
			if err := rep.WriteTimeline(&page); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page.String(), "overlap") {
				t.Fatal("the timeline does not show the overlap")
			}
		})
	}
}

// TestQueueCatchesAckFirst gives consumer c1 the ack-first bug (it
// acknowledges an item before processing it, so that its death mid-item
// loses the item) and checks that the queue checker reports it.
func TestQueueCatchesAckFirst(t *testing.T) {
	zk := cluster(t)
	o := shortOptions(t, chaos.Queue, []chaos.Fault{{Kind: chaos.KillClient, Pick: 0, Wait: 2 * time.Second}})
	o.Bug = chaos.BugAckFirst
	rep := runBroken(t, zk, o, "a broken consumer")
	early := 0
	for _, v := range rep.Violations {
		if v.Kind == "ack before processed" && v.ClientA == "c1" {
			early++
		}
	}
	if early == 0 {
		dump(t, rep)
		t.Fatalf("no early acknowledgement by c1 reported: %v", rep.Violations)
	}
}

// TestCounterCatchesValueSettle gives every writer of the counter workload
// the settle zkcoord had before zkcoord.Settle, which takes a node holding
// what a write wrote for that write's doing, and checks that the checker
// reports the writes it misjudges. Each partition cuts a writer off at a
// round's start, with its create of the round's node in flight; a writer a
// third of a round later creates the node, with the same bytes, meanwhile.
func TestCounterCatchesValueSettle(t *testing.T) {
	zk := cluster(t)
	o := shortOptions(t, chaos.Counter, []chaos.Fault{
		{Kind: chaos.PartitionShort, Pick: 0, Dur: T / 6},
		{Kind: chaos.PartitionShort, Pick: 1, Dur: T / 6},
		{Kind: chaos.PartitionShort, Pick: 2, Dur: T / 6},
	})
	o.Bug = chaos.BugValueSettle
	rep := runBroken(t, zk, o, "the value settle")
	twice := 0
	for _, v := range rep.Violations {
		if v.Kind == "created twice" {
			twice++
		}
	}
	if twice == 0 {
		dump(t, rep)
		t.Fatalf("no node reported created twice: %v", rep.Violations)
	}
}

// TestCLICatchesBrokenZkcoord gives the zkcoord binary of the cli
// workload each known broken behaviour back and checks that the run fails
// with double accesses: a stop during a partition that waits out a long
// --grace, commands protected by the parent-death signal alone, whose
// grandchildren outlive a killed zkcoord, a shim that kills the
// command's process group alone, whose daemonized workers outlive a killed
// zkcoord, and a lock that ignores other kinds of lock on its path, so
// that a reader holds beside a writer. Two clients run each command, so
// that someone is always waiting to take over.
func TestCLICatchesBrokenZkcoord(t *testing.T) {
	zk := cluster(t)
	for _, c := range []struct {
		bug    string
		faults []chaos.Fault
		// between, if set, are the two clients an overlap must be
		// reported between (any of their runs).
		between [2]string
		// on are resources each of which must show an overlap.
		on []string
	}{
		// SIGTERM into a partition of a rebalancing worker (1s in),
		// then at once of the lock holder, then of the elected leader:
		// with this bug no command ignores SIGTERM, and each lingers
		// for half the grace, far past the session's expiry and its
		// successor's start, so the lock and the leadership each show
		// an overlap. (zkcoord rebalance stops its commands only once
		// the session is lost, with the cut of a loss, which even the
		// broken build makes before the expiry.)
		{bug: chaos.BugGrace, faults: []chaos.Fault{
			{Kind: chaos.TermPartitioned, Pick: 2, Dur: 3 * T / 2},
			{Kind: chaos.TermPartitioned, Pick: 0, Dur: 3 * T / 2},
			{Kind: chaos.TermPartitioned, Pick: 10, Dur: 3 * T / 2}, // c5's command, elect; 10%5: SIGTERM at once
		}, on: []string{"l1", "e1"}},
		// SIGKILL of a rebalancing worker, whose commands run until
		// stopped.
		{bug: chaos.BugPdeathsig, faults: []chaos.Fault{
			{Kind: chaos.KillClient, Pick: 2},
			{Kind: chaos.KillClient, Pick: 5},
		}},
		// The same, with every worker daemonized: out of the command's
		// process group.
		{bug: chaos.BugGroupKill, faults: []chaos.Fault{
			{Kind: chaos.KillClient, Pick: 2},
			{Kind: chaos.KillClient, Pick: 5},
		}},
		// c1 takes the lock l1 with --read, c4 as a mutex: each run of
		// either acquires at once and holds for at least T, and a run of
		// the other starts at most a restart later, so the two hold at
		// once from the start, whatever the faults. The SIGKILL of the
		// lock holder only makes the run longer.
		{bug: chaos.BugMixedKinds, faults: []chaos.Fault{
			{Kind: chaos.KillClient, Pick: 0},
		}, between: [2]string{"c1", "c4"}},
	} {
		t.Run(c.bug, func(t *testing.T) {
			o := shortOptions(t, chaos.CLI, c.faults)
			o.Clients, o.MaxClients, o.Resources, o.Bug = 6, 6, 6, c.bug
			rep := runBroken(t, zk, o, "a broken zkcoord")
			overlaps := map[string]int{}
			for _, v := range rep.Violations {
				if v.Kind == "overlap" && (c.between == [2]string{} || between(v.ClientA, v.ClientB, c.between)) {
					overlaps[v.Resource]++
					t.Log(v)
				}
			}
			if len(overlaps) == 0 {
				dump(t, rep)
				t.Fatalf("no overlap reported (between %v): %v", c.between, rep.Violations)
			}
			for _, res := range c.on {
				if overlaps[res] == 0 {
					dump(t, rep)
					t.Fatalf("no overlap on %s reported: %v", res, rep.Violations)
				}
			}
		})
	}
}

// between reports whether a and b are runs ("c1.3") of the two clients
// named in pair, in either order.
func between(a, b string, pair [2]string) bool {
	a, _, _ = strings.Cut(a, ".")
	b, _, _ = strings.Cut(b, ".")
	return a == pair[0] && b == pair[1] || a == pair[1] && b == pair[0]
}

// TestCLIRefusesMixedKinds runs the mixed-kinds setup of
// TestCLICatchesBrokenZkcoord (c1 takes the lock with --read, c4 as a
// mutex) with zkcoord as shipped, built without the zkcoord_broken tag:
// the run passes, no reader holds beside a writer, and the zkcoord that
// comes second to a held lock exits 1 naming the other kind.
func TestCLIRefusesMixedKinds(t *testing.T) {
	zk := cluster(t)
	exe := filepath.Join(t.TempDir(), "zkcoord")
	build := exec.Command("go", "build", "-o", exe, "github.com/zkcoord/zkcoord/cmd/zkcoord")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building zkcoord: %v\n%s", err, out)
	}
	o := shortOptions(t, chaos.CLI, []chaos.Fault{{Kind: chaos.KillClient, Pick: 0}})
	o.Clients, o.MaxClients, o.Resources, o.Bug, o.Zkcoord = 6, 6, 6, chaos.BugMixedKinds, exe
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := chaos.Run(ctx, zk, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Verdict)
	if !rep.Pass {
		dump(t, rep)
		t.Fatalf("verdict: %s\nviolations: %v\nproblems: %v", rep.Verdict, rep.Violations, rep.Problems)
	}
	// The CLI prints the library's message without its package name.
	want := strings.TrimPrefix(lock.ErrOtherKind.Error(), "lock: ")
	refused := map[string]int{}
	for _, name := range []string{"c1", "c4"} {
		log, err := os.ReadFile(filepath.Join(o.Dir, "logs", name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range strings.Split(string(log), "=== zkcoord lock ")[1:] {
			header, _, _ := strings.Cut(run, "\n")
			if strings.HasSuffix(header, ": exit status 1") && strings.Contains(run, want) {
				refused[name]++
			}
		}
	}
	t.Logf("runs refused for another kind of lock: %v", refused)
	if len(refused) == 0 {
		t.Fatalf("no zkcoord lock exited 1 with %q: see the logs in %s", want, o.Dir)
	}
}

// dump keeps a failed run's report and timeline for a person to look at.
func dump(t *testing.T, rep *chaos.Report) {
	dir, err := os.MkdirTemp("", "chaos-failed-")
	if err != nil {
		return
	}
	for name, f := range map[string]func(*os.File) error{
		"report.json":   func(f *os.File) error { return rep.WriteJSON(f) },
		"timeline.html": func(f *os.File) error { return rep.WriteTimeline(f) },
	} {
		file, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		f(file)
		file.Close()
	}
	t.Logf("report and timeline kept in %s", dir)
}

// TestQueueCatchesClaimCallerCtx gives every consumer the claim-caller-ctx
// bug (a take whose deadline expires while its claim is in flight leaves
// the claim behind, held by nobody) and checks that the run fails: items
// stay unacknowledged while their consumers' Sessions live.
func TestQueueCatchesClaimCallerCtx(t *testing.T) {
	zk := cluster(t)
	o := shortOptions(t, chaos.Queue, []chaos.Fault{{Kind: chaos.PauseShort, Pick: 0, Dur: T / 4, Wait: 5 * time.Second}})
	o.Bug, o.BugClients = chaos.BugClaimCallerCtx, []string{"c1", "c2", "c3"}
	// The broken claim is compiled in only with its build tag: the clients
	// are a chaos command built with it.
	exe := filepath.Join(t.TempDir(), "chaos-broken-claim")
	build := exec.Command("go", "build", "-tags", "zkcoord_broken_claim", "-o", exe, "github.com/zkcoord/zkcoord/chaos/cmd/chaos")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the clients: %v\n%s", err, out)
	}
	o.Spawn = func(name, role string, args []string) launch.Spec {
		return launch.Spec{Path: exe, Args: append([]string{role}, args...), Name: name}
	}
	o.ConvergeTimeout = 20 * time.Second
	rep := runBroken(t, zk, o, "consumers that strand their claims")
	if !strings.Contains(rep.Final.Why, "not acknowledged yet") && !strings.Contains(rep.Final.Why, "left in the queue") {
		dump(t, rep)
		t.Fatalf("the final state does not name the stranded items: %q", rep.Final.Why)
	}
}

// runBroken runs o, whose clients have a known bug, and fails the test if
// the run passes: what names the broken clients in the message.
func runBroken(t *testing.T, zk *zktest.Cluster, o chaos.Options, what string) *chaos.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := chaos.Run(ctx, zk, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Verdict)
	if rep.Pass {
		dump(t, rep)
		t.Fatalf("the run with %s passed", what)
	}
	return rep
}
