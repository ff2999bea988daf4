package chaos

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
)

// Stats sums a run up.
type Stats struct {
	Events   int `json:"events"`
	Acquires int `json:"acquires"`
	// Uses accepted and Rejects (stale tokens refused) by the service;
	// RejectsAfterPause were sent by a client that had just been paused
	// (fencing doing its job), RejectsOther by any other.
	Uses              int `json:"uses"`
	Rejects           int `json:"rejects"`
	RejectsAfterPause int `json:"rejects_after_pause"`
	RejectsOther      int `json:"rejects_other"`
	// Overlaps counts every instant two clients held a resource at once;
	// FencedOverlaps of them were excused: the earlier holder was paused
	// and the service accepted none of its uses meanwhile.
	Overlaps       int `json:"overlaps"`
	FencedOverlaps int `json:"fenced_overlaps"`
	// OutsideContinues counts paused clients found running before the
	// harness continued them (see holdPaused); they were stopped again.
	OutsideContinues int `json:"outside_continues,omitempty"`
	// Recoveries counts the new Sessions zkcoord.Supervise opened after a
	// loss (recovery and rebalancer workloads).
	Recoveries int `json:"recoveries,omitempty"`
	// Queue sums the items up (queue workload).
	Queue *QueueStats `json:"queue,omitempty"`
	// Counter sums the writes up (counter workload).
	Counter *CounterStats `json:"counter,omitempty"`
	// Discovery sums the registrations and serve reports up (discovery
	// workload).
	Discovery *DiscoveryStats `json:"discovery,omitempty"`
	// Faults run and Converged after; convergence times after the end of
	// each fault.
	Faults      int                 `json:"faults"`
	Converged   int                 `json:"converged"`
	ConvergeMax time.Duration       `json:"converge_max_ns"`
	ConvergeP50 time.Duration       `json:"converge_p50_ns"`
	ConvergeP90 time.Duration       `json:"converge_p90_ns"`
	ByKind      map[Kind]*KindStats `json:"by_kind"`
}

// KindStats are the convergence times of the faults of one kind: Max and
// Mean after the end of the fault, MaxFromStart from its start.
type KindStats struct {
	Count        int           `json:"count"`
	Converged    int           `json:"converged"`
	Max          time.Duration `json:"max_ns"`
	Mean         time.Duration `json:"mean_ns"`
	MaxFromStart time.Duration `json:"max_from_start_ns"`
}

// analyze runs the checkers over the history.
//
// Unfenced excuses no overlap (Options.Unfenced).
func analyze(h *oracle.History, records []FaultRecord, sessionTimeout time.Duration, unfenced bool) (Stats, []oracle.Violation) {
	events := h.Events()
	st := Stats{Events: len(events), ByKind: map[Kind]*KindStats{}}
	pauses := oracle.Pauses(events)
	for _, e := range events {
		switch e.Kind {
		case event.Acquire:
			st.Acquires++
		case event.Use:
			st.Uses++
		case event.Resume:
			if e.Detail == outsideContinue {
				st.OutsideContinues++
			}
		case event.Note:
			if strings.Contains(e.Detail, ": "+zkcoord.Recovered.String()+" session") {
				st.Recoveries++
			}
		case event.Reject:
			st.Rejects++
			if afterPause(pauses[e.Client], e.At, 2*int64(sessionTimeout)) {
				st.RejectsAfterPause++
			} else {
				st.RejectsOther++
			}
		}
	}
	// (a) No Double Resource Access: an overlap is excused only if its
	// earlier holder was paused and fenced off (CheckFenced).
	violations := h.CheckFenced(sessionTimeout)
	if unfenced {
		violations = h.CheckExclusive()
	}
	for _, v := range h.CheckExclusive() {
		if v.Kind == "overlap" {
			st.Overlaps++
		}
	}
	unexcused := 0
	for _, v := range violations {
		if v.Kind == "overlap" {
			unexcused++
		}
	}
	st.FencedOverlaps = st.Overlaps - unexcused

	// (c) Convergence after each fault.
	var times []time.Duration
	for _, r := range records {
		st.Faults++
		k := st.ByKind[r.Fault.Kind]
		if k == nil {
			k = &KindStats{}
			st.ByKind[r.Fault.Kind] = k
		}
		k.Count++
		if !r.OK {
			continue
		}
		st.Converged++
		k.Converged++
		k.Max = max(k.Max, r.Converge)
		k.MaxFromStart = max(k.MaxFromStart, time.Duration(r.Converged-r.Start))
		k.Mean += r.Converge
		times = append(times, r.Converge)
	}
	for _, k := range st.ByKind {
		if k.Converged > 0 {
			k.Mean = (k.Mean / time.Duration(k.Converged)).Round(time.Millisecond)
		}
	}
	slices.Sort(times)
	if n := len(times); n > 0 {
		st.ConvergeMax = times[n-1]
		st.ConvergeP50 = times[(n-1)/2]
		st.ConvergeP90 = times[int(math.Ceil(0.9*float64(n)))-1]
	}
	return st, violations
}

// afterPause reports whether at falls in a pause or within window after one.
func afterPause(spans []oracle.PauseSpan, at, window int64) bool {
	for _, p := range spans {
		if p.From <= at && at <= p.To+window {
			return true
		}
	}
	return false
}

// verdict builds the one-line verdict.
func (r *Report) verdict() string {
	var b strings.Builder
	if r.Pass {
		b.WriteString("PASS")
	} else {
		b.WriteString("FAIL")
	}
	st := r.Stats
	doubles := 0
	for _, v := range r.Violations {
		if v.Kind == "overlap" {
			doubles++
		}
	}
	fmt.Fprintf(&b, " %s seed=%d:", r.Workload, r.Seed)
	fmt.Fprintf(&b, " %d double accesses accepted", doubles)
	if other := len(r.Violations) - doubles; other > 0 {
		fmt.Fprintf(&b, " (+%d other history violations)", other)
	}
	fmt.Fprintf(&b, ", %d/%d faults converged", st.Converged, st.Faults)
	if st.Converged > 0 {
		fmt.Fprintf(&b, " (median %v, p90 %v, max %v)", st.ConvergeP50.Round(10*time.Millisecond),
			st.ConvergeP90.Round(10*time.Millisecond), st.ConvergeMax.Round(10*time.Millisecond))
	}
	if r.Final.OK {
		b.WriteString(", " + finalWord(r.Workload) + " at the end")
	} else {
		b.WriteString(", NOT " + finalWord(r.Workload) + " at the end")
	}
	fmt.Fprintf(&b, "; %d uses accepted, %d stale uses rejected (%d after a pause), %d overlaps fenced off",
		st.Uses, st.Rejects, st.RejectsAfterPause, st.FencedOverlaps)
	if n := st.OutsideContinues; n > 0 {
		fmt.Fprintf(&b, "; %d paused clients continued from outside", n)
	}
	if n := st.Recoveries; n > 0 {
		fmt.Fprintf(&b, "; %d sessions recovered", n)
	}
	if q := st.Queue; q != nil {
		fmt.Fprintf(&b, "; queue: %d items put (+%d unknown), %d processed, %d acknowledged, %d redelivered",
			q.Put, q.PutUnknown, q.Processed, q.Acked, q.Redelivered)
	}
	if c := st.Counter; c != nil {
		fmt.Fprintf(&b, "; counter: %d, %d increments acknowledged (+%d unknown); %d round nodes, %d creates acknowledged (+%d unknown); %d list updates acknowledged (+%d unknown), %d listed",
			c.Count, c.Adds, c.AddsUnknown, c.Nodes, c.Creates, c.CreatesUnknown, c.Updates, c.UpdatesUnknown, c.Listed)
	}
	if d := st.Discovery; d != nil {
		fmt.Fprintf(&b, "; discovery: %d registrations (%d replaced), %d serve reports, %d served never registered, %d served after gone, %d missing",
			d.Registrations, d.Replacements, d.Reports, d.Unknown, d.Stale, d.Missing)
	}
	if n := len(r.Problems); n > 0 {
		fmt.Fprintf(&b, "; %d problems", n)
	}
	return b.String()
}

func finalWord(w Workload) string {
	switch {
	case w.rebalance():
		return "balanced"
	case w == Election:
		return "one leader per election"
	case w == CLI:
		return "every lock and leadership taken again, every resource of the group held"
	case w == Queue:
		return "every item acknowledged, the queue empty"
	case w == Counter:
		return "every writer writing again"
	case w == Recovery:
		return "every lock and leadership taken again"
	case w == Discovery:
		return "every client registered and serving again"
	}
	return "locks still granted"
}
