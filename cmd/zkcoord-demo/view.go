package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/internal/groupwatch"
	"golang.org/x/term"
)

// demoView shows the demo: redrawn in place on a terminal, one line per
// event otherwise.
type demoView interface {
	start()
	line(at time.Duration, text string) // a progress line
	refresh()                           // the state changed
	finish()                            // the demo is over: leave the last frame
	plain() bool
}

func newDemoView(d *demo, w io.Writer, forcePlain bool) demoView {
	if f, ok := w.(*os.File); ok && !forcePlain && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb" {
		return &termView{d: d, w: f, dirty: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	}
	return &plainView{d: d, w: w}
}

// plainView prints progress lines.
type plainView struct {
	d  *demo
	w  io.Writer
	mu sync.Mutex
}

func (v *plainView) start() {
	v.mu.Lock()
	defer v.mu.Unlock()
	fmt.Fprintln(v.w, strings.TrimSpace(v.d.intro()))
	fmt.Fprintln(v.w)
}

func (v *plainView) line(at time.Duration, text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fmt.Fprintf(v.w, "[%6.1fs] %s\n", at.Seconds(), text)
}

func (v *plainView) refresh()    {}
func (v *plainView) finish()     {}
func (v *plainView) plain() bool { return true }

// termView redraws a frame in place, at most ten times a second.
type termView struct {
	d      *demo
	w      *os.File
	mu     sync.Mutex
	height int // lines drawn by the last frame
	dirty  chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

func (v *termView) start() {
	fmt.Fprintln(v.w, strings.TrimSpace(v.d.intro()))
	fmt.Fprintln(v.w)
	go func() {
		defer close(v.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-v.stop:
				v.draw()
				return
			case <-tick.C:
				v.draw()
			}
		}
	}()
}

func (v *termView) line(time.Duration, string) { v.refresh() }

func (v *termView) refresh() {
	select {
	case v.dirty <- struct{}{}:
	default:
	}
}

func (v *termView) finish() {
	close(v.stop)
	<-v.done
}

func (v *termView) plain() bool { return false }

func (v *termView) draw() {
	width, height := 100, 50
	if w, h, err := term.GetSize(int(v.w.Fd())); err == nil && w > 20 && h > 5 {
		width, height = w, h
	}
	lines := v.d.frame(height - 1)
	if len(lines) > height-1 {
		// Lines above the top of the screen cannot be redrawn.
		lines = append(lines[:height-2], "  ...")
	}
	var b strings.Builder
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.height > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.height) // back to the first line of the last frame
	}
	b.WriteString("\r\x1b[J") // clear from there down
	for _, l := range lines {
		if r := []rune(l); len(r) > width-1 {
			l = string(r[:width-1])
		}
		b.WriteString(l)
		b.WriteString("\n")
	}
	v.height = len(lines)
	_, _ = io.WriteString(v.w, b.String())
}

// intro explains what the demo does, for someone who has never seen
// ZooKeeper.
func (d *demo) intro() string {
	return fmt.Sprintf(`
zkcoord demo: %d worker processes share %d resources through ZooKeeper, then
things go wrong on purpose. Each worker runs

    zkcoord rebalance %s --exec 'sleep 3600'

so it runs one 'sleep' process per resource it owns. The workers elect a
coordinator among themselves, which writes who owns what into ZooKeeper. A
worker starts a resource's process only after taking the resource's barrier
node, which the previous owner deletes only after its own process has exited.
Every worker reports each start and stop, and an oracle checks that no
resource ever runs in two places at once.
`, d.o.workers, d.o.resources, d.group)
}

// frame renders the terminal view in at most maxLines lines if it can: the
// notes of earlier steps and older rebalancings go first.
func (d *demo) frame(maxLines int) []string {
	var out []string
	for _, compact := range []int{0, 1, 2, 3} {
		out = d.render(compact)
		if len(out) <= maxLines {
			break
		}
	}
	return out
}

// render draws the view; compact > 0 leaves out notes of finished steps but
// the last, and then older rebalancings.
func (d *demo) render(compact int) []string {
	holdings := d.hist.Holdings()
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	zk := strings.Join(d.servers, ",")
	if d.cluster != nil {
		zk += " (started for the demo)"
	}
	add("zkcoord demo   %5.1fs   ZooKeeper %s", time.Since(d.t0).Seconds(), zk)
	add("")

	coord := ""
	barriers := map[string]int{}
	if d.last != nil {
		coord = groupwatch.MemberName(d.last, d.last.Coordinator)
		for _, m := range d.last.Members {
			barriers[groupwatch.MemberName(d.last, m.ID)] = len(m.Holding)
		}
	}
	add("  %-10s %-7s %-12s %s", "WORKER", "PID", "STATE", "RUNS (one 'sleep' per resource)")
	for _, w := range d.workers {
		state := w.state
		if state == "running" {
			state = "follower"
			if w.name == coord {
				state = "coordinator"
			}
			if _, member := barriers[w.name]; !member {
				state = "joining"
			}
		}
		runs := cli.Words(holdings[w.name])
		if w.state == "killed" && barriers[w.name] > 0 {
			runs = fmt.Sprintf("nothing; ZooKeeper keeps its %d barriers until its session expires", barriers[w.name])
		}
		if w.state == "partitioned" && len(holdings[w.name]) > 0 {
			runs += "  (cannot reach ZooKeeper)"
		}
		pid := "-"
		if w.proc != nil {
			pid = fmt.Sprint(w.proc.Pid())
		}
		add("  %-10s %-7s %-12s %s", w.name, pid, state, runs)
	}
	if d.last != nil {
		status := "settled"
		if d.last.Rebalancing {
			var moves []string
			for _, m := range d.last.Pending {
				moves = append(moves, fmt.Sprintf("%s %s->%s", m.Resource, cli.Dash(groupwatch.MemberName(d.last, m.From)), groupwatch.MemberName(d.last, m.To)))
			}
			status = "rebalancing: " + strings.Join(moves, ", ")
		}
		add("  term %d   generation %d   %s", d.last.Term, d.last.Generation, status)
	}
	add("")

	add("  STEPS")
	lastDone := -1
	for i, s := range d.steps {
		if !s.end.IsZero() {
			lastDone = i
		}
	}
	for i, s := range d.steps {
		mark := "..."
		took := time.Since(s.start)
		if !s.end.IsZero() {
			took = s.end.Sub(s.start)
			mark = "done"
			if s.err != nil {
				mark = "FAIL"
			}
		}
		add("  %-4s %5.1fs  %d. %s", mark, took.Seconds(), s.n, s.title)
		if s.end.IsZero() {
			add("               %s", s.explain)
		}
		if compact == 0 || i >= lastDone {
			for _, n := range s.notes {
				add("               %s", n)
			}
		}
	}
	add("")
	add("  REBALANCINGS (from the first change seen in ZooKeeper until every resource runs at its new owner)")
	first := max(0, len(d.episodes)-[]int{8, 8, 4, 2}[compact])
	for _, e := range d.episodes[first:] {
		add("  #%-3d %6s  %2d moved  %s", e.N, fmtDur(e.Duration()), e.Moved, e.Trigger)
	}
	if len(d.episodes) == 0 {
		add("  (none yet)")
	}
	add("")
	if v := d.hist.CheckExclusive(); len(v) > 0 {
		add("  ORACLE: %d violations! first: %s", len(v), v[0])
	} else {
		add("  oracle: %d events so far, no resource ever ran twice at once", d.hist.Len())
	}
	for _, p := range d.problems.List() {
		add("  PROBLEM: %s", p)
	}
	return out
}

// verdict prints the summary and returns the demo's result.
func (d *demo) verdict(runErr error) error {
	w := d.a.Stdout
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Summary")
	done := 0
	for _, s := range d.steps {
		if !s.end.IsZero() && s.err == nil {
			done++
		}
	}
	fmt.Fprintf(w, "  steps:         %d of %d done in %s\n", done, d.total, fmtDur(time.Since(d.t0)))
	if n := len(d.episodes); n > 0 {
		ds := make([]time.Duration, n)
		for i, e := range d.episodes {
			ds[i] = e.Duration()
		}
		slices.Sort(ds)
		fmt.Fprintf(w, "  rebalancings:  %d (fastest %s, median %s, slowest %s)\n", n, fmtDur(ds[0]), fmtDur(ds[n/2]), fmtDur(ds[n-1]))
	}
	for _, s := range d.steps {
		if s.summary != "" {
			fmt.Fprintf(w, "  timing:        %s\n", s.summary)
		}
	}
	starts, stops := 0, 0
	for _, e := range d.hist.Events() {
		switch e.Kind {
		case "acquire":
			starts++
		case "release":
			stops++
		}
	}
	fmt.Fprintf(w, "  processes:     %d started and %d stopped by workers (the rest died with a killed worker)\n", starts, stops)
	violations := d.hist.CheckExclusive()
	if len(violations) == 0 {
		fmt.Fprintf(w, "  oracle:        no resource ever ran twice at once (%d events checked)\n", d.hist.Len())
	} else {
		fmt.Fprintf(w, "  oracle:        %d violations:\n", len(violations))
		for _, v := range violations {
			fmt.Fprintf(w, "                 %s\n", v)
		}
	}
	if d.o.history != "" {
		if f, err := os.Create(d.o.history); err == nil {
			_ = d.hist.WriteJSON(f)
			f.Close()
			fmt.Fprintf(w, "  history:       %s\n", d.o.history)
		} else {
			fmt.Fprintf(w, "  history:       %v\n", err)
		}
	}
	problems := d.problems.List()
	if runErr != nil {
		problems = append(problems, runErr.Error())
	}
	if len(violations) > 0 {
		problems = append(problems, "a resource ran twice at once")
	}
	if runErr == nil && (d.total == 0 || done < d.total) && len(problems) == 0 {
		problems = append(problems, "the script did not finish")
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(w, "  problem:       %s\n", p)
		}
		fmt.Fprintln(w, "VERDICT: FAIL")
		return &cli.ExitError{Code: cli.ExitFailure}
	}
	fmt.Fprintln(w, "  cleanup:       every process the demo started is gone")
	fmt.Fprintln(w, "VERDICT: PASS")
	return nil
}
