//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// startWorkerT starts "zkcoord rebalance" reporting its events into h.
func startWorkerT(t *testing.T, h *oracle.History, group, name string, extra ...string) *launch.Proc {
	t.Helper()
	args := append([]string{"rebalance", group, "--name", name, "--events", "--grace", "2s"}, extra...)
	p, err := launch.Start(context.Background(), launch.Spec{Path: binary, Args: args, Name: name,
		Env: testEnv(cluster.ConnectString())}, h.Sink(name, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	return p
}

// describe reads the group with the library, for comparison.
func describe(t *testing.T, group string) *rebalance.Description {
	t.Helper()
	sess := session(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := rebalance.Describe(ctx, sess, zkcoord.Join(rebalance.DefaultRoot, group))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// statusJSON runs "zkcoord status --json".
func statusJSON(t *testing.T, group string) *rebalance.Description {
	t.Helper()
	out := mustZkc(t, "status", group, "--json")
	var d rebalance.Description
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return &d
}

// waitBalanced waits until the workers named hold the resources evenly,
// by their own reports, and the group is settled.
func waitBalanced(t *testing.T, h *oracle.History, group string, names, resources []string) {
	t.Helper()
	testkit.Eventually(t, 45*time.Second, fmt.Sprintf("%v to share %d resources", names, len(resources)), func() bool {
		if oracle.CheckBalanced(h.Holdings(), names, resources) != nil {
			return false
		}
		d := statusJSON(t, group)
		return !d.Rebalancing && len(d.Members) == len(names)
	})
}

// rebalance --exec spreads the resources over the workers, runs one child
// per resource with the resource and its token in the environment, and
// moves resources on join and leave without ever running one twice.
func TestRebalanceExec(t *testing.T) {
	t.Parallel()
	group := strings.TrimPrefix(strings.ReplaceAll(unique(t), "/", "-"), "-")
	dir := t.TempDir()
	resources := []string{"r1", "r2", "r3", "r4", "r5", "r6"}
	mustZkc(t, append([]string{"resources", "add", group}, resources...)...)
	if out := mustZkc(t, "resources", "ls", group); strings.Fields(out)[0] != "r1" || len(strings.Fields(out)) != 6 {
		t.Fatalf("resources ls: %q", out)
	}
	// Each child records its resource and token in a file named after the
	// resource, then runs until stopped.
	exec := fmt.Sprintf(`echo "{resource} $ZKCOORD_RESOURCE $ZKCOORD_TOKEN $ZKCOORD_GROUP" >> %s/{resource}; exec sleep 600`, dir)
	var h oracle.History
	w1 := startWorkerT(t, &h, group, "w1", "--exec", exec)
	w2 := startWorkerT(t, &h, group, "w2", "--exec", exec)
	waitBalanced(t, &h, group, []string{"w1", "w2"}, resources)

	// status --json matches the group as the library reads it.
	got, want := statusJSON(t, group), describe(t, group)
	if got.Coordinator != want.Coordinator || got.Term != want.Term || got.Generation != want.Generation ||
		!slices.Equal(got.Resources, want.Resources) || len(got.Members) != 2 || len(got.Barriers) != 6 {
		t.Fatalf("status --json %+v\ndiffers from Describe %+v", got, want)
	}
	for c, rs := range want.Allocation {
		if !slices.Equal(got.Allocation[c], rs) {
			t.Fatalf("allocation of %s: status says %v, Describe %v", c, got.Allocation[c], rs)
		}
	}
	table := mustZkc(t, "status", group)
	for _, s := range []string{"coordinator", "w1", "w2", "r6", "settled"} {
		if !strings.Contains(table, s) {
			t.Errorf("status table lacks %q:\n%s", s, table)
		}
	}
	// Every child got its resource and token; the token is the barrier's.
	for _, b := range got.Barriers {
		lines := readLines(t, filepath.Join(dir, b.Resource))
		if len(lines) == 0 {
			t.Fatalf("no child ran for %s", b.Resource)
		}
		f := strings.Fields(lines[len(lines)-1])
		if f[0] != b.Resource || f[1] != b.Resource || f[2] != fmt.Sprint(b.Token) || f[3] != group {
			t.Errorf("child of %s saw %q; barrier token %d", b.Resource, lines[len(lines)-1], b.Token)
		}
	}

	// A third worker joins: 2 resources each.
	w3 := startWorkerT(t, &h, group, "w3", "--exec", exec)
	waitBalanced(t, &h, group, []string{"w1", "w2", "w3"}, resources)

	// One leaves (SIGTERM): its resources move, after its children stopped.
	if err := w1.Terminate(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := w1.ExitErr(); err != nil {
		t.Fatalf("w1 exit: %v\n%s", err, w1.Stderr())
	}
	waitBalanced(t, &h, group, []string{"w2", "w3"}, resources)

	// A resource removed is stopped by its owner; one added is started.
	mustZkc(t, "resources", "rm", group, "r1")
	mustZkc(t, "resources", "add", group, "r7")
	resources = []string{"r2", "r3", "r4", "r5", "r6", "r7"}
	waitBalanced(t, &h, group, []string{"w2", "w3"}, resources)
	if r := zkc(t, "resources", "rm", group, "r1"); r.code != exitFailure || !strings.Contains(r.stderr, "no such resource") {
		t.Errorf("removing a missing resource: %s", r)
	}

	for _, w := range []*launch.Proc{w2, w3} {
		if err := w.Terminate(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		if err := w.ExitErr(); err != nil {
			t.Fatalf("%s exit: %v\n%s", w.Name(), err, w.Stderr())
		}
	}
	if v := h.CheckExclusive(); len(v) > 0 {
		t.Fatalf("a resource ran twice at once: %v", v)
	}
	if left := h.Holdings(); len(left) > 0 {
		t.Fatalf("still held after every worker stopped: %v", left)
	}
	// Every resource a worker held, it held with the token of the barrier:
	// tokens grow from one holder to the next (checked by CheckExclusive).
	var acquires int
	for _, e := range h.Events() {
		if e.Kind == event.Acquire {
			acquires++
		}
	}
	if acquires < 6+2+2 {
		t.Errorf("only %d acquisitions recorded", acquires)
	}
}

// A child that keeps failing is restarted with a delay, and after
// --max-restarts the worker gives up: it leaves the group and exits 1.
func TestRebalanceRestart(t *testing.T) {
	t.Parallel()
	group := strings.TrimPrefix(strings.ReplaceAll(unique(t), "/", "-"), "-")
	file := filepath.Join(t.TempDir(), "runs")
	mustZkc(t, "resources", "add", group, "only")
	var h oracle.History
	w := startWorkerT(t, &h, group, "w", "--restart", "on-failure", "--restart-delay", "50ms", "--max-restarts", "2",
		"--exec", fmt.Sprintf("echo run >> %s; exit 3", file))
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if err := w.Wait(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("want the worker to give up with an error, got %v\n%s", err, w.Stderr())
	}
	if n := len(readLines(t, file)); n != 3 {
		t.Errorf("want 3 runs (1 + 2 restarts), got %d", n)
	}
	if !strings.Contains(w.Stderr(), "failed 3 times") {
		t.Errorf("stderr does not explain:\n%s", w.Stderr())
	}
	if d := describe(t, group); len(d.Members) != 0 || len(d.Barriers) != 0 {
		t.Errorf("the worker did not leave cleanly: %+v", d)
	}
	if v := h.CheckExclusive(); len(v) > 0 {
		t.Fatal(v)
	}
}

// The other two modes share resources as well, and never run one twice.
func TestRebalanceModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"resource-barrier", "global-barrier"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			group := strings.TrimPrefix(strings.ReplaceAll(unique(t), "/", "-"), "-")
			resources := []string{"a", "b", "c", "d"}
			mustZkc(t, append([]string{"resources", "add", group}, resources...)...)
			var h oracle.History
			args := []string{"--mode", mode, "--exec", "sleep 600"}
			w1 := startWorkerT(t, &h, group, "w1", args...)
			w2 := startWorkerT(t, &h, group, "w2", args...)
			waitBalanced(t, &h, group, []string{"w1", "w2"}, resources)
			w3 := startWorkerT(t, &h, group, "w3", args...)
			waitBalanced(t, &h, group, []string{"w1", "w2", "w3"}, resources)
			if d := statusJSON(t, group); mode == "global-barrier" && (d.Status == nil || d.Status.Phase != rebalance.PhaseStartConfirmed) {
				t.Errorf("global-barrier status: %+v", d.Status)
			}
			for _, w := range []*launch.Proc{w1, w2, w3} {
				if err := w.Terminate(20 * time.Second); err != nil {
					t.Fatal(err)
				}
			}
			if v := h.CheckExclusive(); len(v) > 0 {
				t.Fatalf("a resource ran twice at once: %v", v)
			}
		})
	}
}

// Seen from the children: a resource's next child starts only after the
// previous one has stopped. Each child appends "start RESOURCE PID" when it
// starts and, from its SIGTERM trap, "stop RESOURCE PID" to one file opened
// for appending, so the file's order is the order of the writes; for every
// resource the lines must alternate start and stop, each stop matching the
// start before it.
func TestRebalanceExecHandover(t *testing.T) {
	t.Parallel()
	group := strings.TrimPrefix(strings.ReplaceAll(unique(t), "/", "-"), "-")
	file := filepath.Join(t.TempDir(), "log")
	resources := []string{"r1", "r2", "r3", "r4"}
	mustZkc(t, append([]string{"resources", "add", group}, resources...)...)
	exec := fmt.Sprintf(`trap 'echo "stop $ZKCOORD_RESOURCE $$" >> %[1]s; exit 0' TERM; `+
		`echo "start $ZKCOORD_RESOURCE $$" >> %[1]s; while :; do sleep 0.05; done`, file)
	var h oracle.History
	w1 := startWorkerT(t, &h, group, "w1", "--exec", exec)
	w2 := startWorkerT(t, &h, group, "w2", "--exec", exec)
	waitBalanced(t, &h, group, []string{"w1", "w2"}, resources)
	w3 := startWorkerT(t, &h, group, "w3", "--exec", exec)
	waitBalanced(t, &h, group, []string{"w1", "w2", "w3"}, resources)
	if err := w1.Terminate(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitBalanced(t, &h, group, []string{"w2", "w3"}, resources)
	for _, w := range []*launch.Proc{w1, w2, w3} {
		if err := w.Terminate(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		if err := w.ExitErr(); err != nil {
			t.Fatalf("%s exit: %v\n%s", w.Name(), err, w.Stderr())
		}
	}

	lines := readLines(t, file)
	running := map[string]string{} // resource -> pid of its running child
	starts := 0
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("line %d: %q", i+1, l)
		}
		what, res, pid := f[0], f[1], f[2]
		switch {
		case what == "start" && running[res] == "":
			running[res] = pid
			starts++
		case what == "start":
			t.Fatalf("line %d: a child of %s started while child %s still ran:\n%s", i+1, res, running[res], strings.Join(lines, "\n"))
		case what == "stop" && running[res] == pid:
			delete(running, res)
		default:
			t.Fatalf("line %d: %q does not match the child that ran (%q):\n%s", i+1, l, running[res], strings.Join(lines, "\n"))
		}
	}
	if len(running) > 0 {
		t.Errorf("children that never reported stopping: %v\n%s", running, strings.Join(lines, "\n"))
	}
	// 4 first starts, then at least one move when w3 joined and one when
	// w1 left.
	if starts < len(resources)+2 {
		t.Errorf("only %d starts: the resources did not move\n%s", starts, strings.Join(lines, "\n"))
	}
	if v := h.CheckExclusive(); len(v) > 0 {
		t.Fatalf("a resource ran twice at once: %v", v)
	}
}

// --restart never leaves a resource whose CMD exited idle; always restarts
// even a CMD that succeeded, which on-failure (the default) does not.
func TestRebalanceRestartPolicies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		policy  string
		status  int
		restart bool
	}{
		{policy: "never", status: 3},
		{policy: "on-failure", status: 0},
		{policy: "always", status: 0, restart: true},
	}
	for _, c := range cases {
		t.Run(c.policy, func(t *testing.T) {
			t.Parallel()
			group := strings.TrimPrefix(strings.ReplaceAll(unique(t), "/", "-"), "-")
			file := filepath.Join(t.TempDir(), "runs")
			mustZkc(t, "resources", "add", group, "only")
			var h oracle.History
			w := startWorkerT(t, &h, group, "w", "--restart", c.policy, "--restart-delay", "50ms", "--log-level", "info",
				"--exec", fmt.Sprintf("echo run >> %s; exit %d", file, c.status))
			if c.restart {
				testkit.Eventually(t, 30*time.Second, "the command to run 3 times", func() bool { return len(readLines(t, file)) >= 3 })
			} else {
				// The worker says so once it decided; it does not look again.
				testkit.Eventually(t, 30*time.Second, "the worker to decide not to restart", func() bool {
					return strings.Contains(w.Stderr(), "not restarting the command")
				})
				if n := len(readLines(t, file)); n != 1 {
					t.Errorf("want 1 run, got %d", n)
				}
				// The resource stays with the worker, idle.
				if d := describe(t, group); len(d.Members) != 1 || len(d.Barriers) != 1 || d.Barriers[0].Resource != "only" {
					t.Errorf("the worker let the resource go: %+v", d)
				}
			}
			if w.Exited() {
				t.Fatalf("the worker exited: %v\n%s", w.ExitErr(), w.Stderr())
			}
			if err := w.Terminate(20 * time.Second); err != nil {
				t.Fatal(err)
			}
			if err := w.ExitErr(); err != nil {
				t.Fatalf("worker exit: %v\n%s", err, w.Stderr())
			}
			if v := h.CheckExclusive(); len(v) > 0 {
				t.Fatal(v)
			}
		})
	}
}
