package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
)

// Report is the outcome of a run: the verdict, what was done, what was
// measured, and the whole history.
type Report struct {
	Workload       Workload      `json:"workload"`
	Seed           uint64        `json:"seed"`
	Duration       time.Duration `json:"duration_ns"`
	SessionTimeout time.Duration `json:"session_timeout_ns"`
	LostAfter      float64       `json:"lost_after"`
	Clients        int           `json:"clients"`
	Resources      int           `json:"resources"`
	Bug            string        `json:"bug,omitempty"`
	BugClients     []string      `json:"bug_clients,omitempty"`
	// Command is how to run it again (set by the chaos command).
	Command string `json:"command,omitempty"`

	Pass    bool   `json:"pass"`
	Verdict string `json:"verdict"`
	// Start and End of the run, event.Now times (ns); every other time in
	// the report is on the same clock.
	Start int64 `json:"start"`
	End   int64 `json:"end"`

	Faults     []FaultRecord      `json:"faults"`
	Spans      []Span             `json:"spans"`
	Final      FinalState         `json:"final"`
	Stats      Stats              `json:"stats"`
	Violations []oracle.Violation `json:"violations"`
	Problems   []string           `json:"problems"`
	Events     []event.Event      `json:"events"`
	Intervals  []oracle.Interval  `json:"intervals"`
}

// Wall returns the report's run time.
func (r *Report) Wall() time.Duration { return time.Duration(r.End - r.Start) }

func (h *harness) report(final FinalState) *Report {
	o := h.o
	st, violations := analyze(h.hist, h.records, o.SessionTimeout, o.Unfenced)
	if h.queue != nil {
		q, v := checkQueue(h.hist.Events())
		st.Queue = &q
		violations = append(violations, v...)
	}
	if h.counter != nil {
		h.counter.mu.Lock()
		end := h.counter.final
		h.counter.mu.Unlock()
		c, v := checkCounter(h.hist.Events(), end)
		st.Counter = &c
		violations = append(violations, v...)
	}
	if h.disc != nil {
		d, v := checkDiscovery(h.hist.Events(), o.SessionTimeout)
		st.Discovery = &d
		violations = append(violations, v...)
	}
	r := &Report{
		Workload: o.Workload, Seed: o.Seed, Duration: o.Duration, SessionTimeout: o.SessionTimeout,
		LostAfter: o.LostAfter, Clients: o.Clients, Resources: o.Resources, Bug: o.Bug,
		Start: h.t0, End: event.Now(),
		Faults: h.records, Spans: h.spans, Final: final, Stats: st, Violations: violations,
		Problems: h.problems.List(), Events: h.hist.Events(), Intervals: h.hist.Intervals(),
	}
	if o.Bug != "" {
		r.BugClients = o.BugClients
	}
	if len(o.Faults) > 0 {
		r.Duration = 0
	}
	for i := range r.Spans {
		if r.Spans[i].To == 0 {
			r.Spans[i].To = r.End
		}
	}
	for i := range r.Intervals {
		if r.Intervals[i].Open {
			r.Intervals[i].End = 0
		}
	}
	r.Pass = len(violations) == 0 && st.Converged == st.Faults && final.OK && len(r.Problems) == 0
	r.Verdict = r.verdict()
	if r.Faults == nil {
		r.Faults = []FaultRecord{}
	}
	if r.Spans == nil {
		r.Spans = []Span{}
	}
	if r.Violations == nil {
		r.Violations = []oracle.Violation{}
	}
	if r.Problems == nil {
		r.Problems = []string{}
	}
	return r
}

// WriteJSON writes the report, history included, as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(r)
}

// WriteSummary writes the report's figures as Markdown: the verdict, the
// counts, and the convergence times per kind of fault.
func (r *Report) WriteSummary(w io.Writer) error {
	st := r.Stats
	ms := func(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", r.Verdict)
	if r.Command != "" {
		fmt.Fprintf(&b, "    %s\n\n", r.Command)
	}
	fmt.Fprintf(&b, "| run time | faults | converged | acquisitions | uses accepted | stale uses refused (after a pause) | overlaps fenced off | double accesses accepted |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|\n")
	doubles := 0
	for _, v := range r.Violations {
		if v.Kind == "overlap" {
			doubles++
		}
	}
	fmt.Fprintf(&b, "| %v | %d | %d | %d | %d | %d (%d) | %d | %d |\n\n", r.Wall().Round(time.Second), st.Faults,
		st.Converged, st.Acquires, st.Uses, st.Rejects, st.RejectsAfterPause, st.FencedOverlaps, doubles)
	fmt.Fprintf(&b, "| fault | count | converged | mean after its end | max after its end | max after its start |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|\n")
	for _, k := range Kinds() {
		ks := st.ByKind[k]
		if ks == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s |\n", k, ks.Count, ks.Converged, ms(ks.Mean), ms(ks.Max), ms(ks.MaxFromStart))
	}
	if q := st.Queue; q != nil {
		fmt.Fprintf(&b, "\n| items put | put, outcome unknown | taken | processed | redelivered | acknowledged | acknowledged, reply lost with its consumer |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d |\n", q.Put, q.PutUnknown, q.Taken, q.Processed,
			q.Redelivered, q.Acked, q.AckUnrecorded)
	}
	if c := st.Counter; c != nil {
		fmt.Fprintf(&b, "\n| count | increments acknowledged | unknown | round nodes | created | found there | create unknown | list updates acknowledged | unknown | ids listed |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", c.Count, c.Adds, c.AddsUnknown,
			c.Nodes, c.Creates, c.CreatesFound, c.CreatesUnknown, c.Updates, c.UpdatesUnknown, c.Listed)
	}
	if d := st.Discovery; d != nil {
		fmt.Fprintf(&b, "\n| registrations | replacements | serve reports | served never registered | served after gone | missing |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|\n")
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d |\n", d.Registrations, d.Replacements, d.Reports, d.Unknown, d.Stale, d.Missing)
	}
	if st.Recoveries > 0 {
		fmt.Fprintf(&b, "\nSessions recovered by zkcoord.Supervise: %d.\n", st.Recoveries)
	}
	if r.Final.OK {
		fmt.Fprintf(&b, "\nFinal state (%s) reached %s after the last fault.\n", finalWord(r.Workload), ms(r.Final.Converge))
	} else {
		fmt.Fprintf(&b, "\nFinal state NOT reached: %s\n", r.Final.Why)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
