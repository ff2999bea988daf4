package oracle

import (
	"cmp"
	"encoding/json"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"io"
	"slices"
	"sync"
)

// History collects events from any number of goroutines and processes.
// The zero value is ready to use.
type History struct {
	mu     sync.Mutex
	events []entry
}

type entry struct {
	event.Event
	seq int // arrival order, to break ties between equal times
}

// Add records e. An event without a time is stamped with [event.Now].
func (h *History) Add(e event.Event) {
	if e.At == 0 {
		e.At = event.Now()
	}
	h.mu.Lock()
	h.events = append(h.events, entry{Event: e, seq: len(h.events)})
	h.mu.Unlock()
}

// Mark records a marker event (Fault, Quiet, Note...) now.
func (h *History) Mark(kind event.Kind, client, detail string) {
	h.Add(event.Event{Kind: kind, Client: client, Detail: detail})
}

// Len returns the number of events recorded.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.events)
}

// Events returns a copy of the events sorted by time; events with equal
// times keep the order in which they were added.
func (h *History) Events() []event.Event {
	h.mu.Lock()
	es := slices.Clone(h.events)
	h.mu.Unlock()
	slices.SortStableFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.seq, b.seq))
	})
	out := make([]event.Event, len(es))
	for i, e := range es {
		out[i] = e.Event
	}
	return out
}

// Before returns a new History holding the events of h stamped before t.
//
// The harness reads each process's output in a goroutine of its own, so in
// the middle of a run h may already hold a process's recent events but not
// yet another's earlier ones: a new owner's acquire, say, before the
// previous owner's release, which looks like an overlap. Once every live
// process is known to have delivered all of its events stamped before t
// (for example by answering with [event.Emitter.WriteLine] a request sent after
// t), the history before t is complete and every check on it is exact.
func (h *History) Before(t int64) *History {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := &History{}
	for _, e := range h.events {
		if e.At < t {
			out.events = append(out.events, entry{Event: e.Event, seq: len(out.events)})
		}
	}
	return out
}

// Sink returns a function that reads the output lines of one client process
// (for example the sink of launch.Start): event lines are added to h, with
// client as their Client when they name none, lines that look like events but
// cannot be parsed are added as [Invalid] events, and every other line goes to
// next (if not nil).
func (h *History) Sink(client string, next func(line string)) func(line string) {
	return event.Sink(client, h.Add, next)
}

// WriteJSON writes the history for later inspection or visualisation: an
// object with "events" (sorted by time), "intervals" (every holding, with
// "end" absent while still held) and "violations" (those of
// [History.CheckExclusive]).
func (h *History) WriteJSON(w io.Writer) error {
	events := h.Events()
	ivs, anomalies := intervals(events)
	violations := append(anomalies, overlaps(ivs)...)
	for i := range ivs {
		if ivs[i].Open {
			ivs[i].End = 0 // omitted
		}
	}
	out := struct {
		Events     []event.Event `json:"events"`
		Intervals  []Interval    `json:"intervals"`
		Violations []Violation   `json:"violations"`
	}{events, ivs, violations}
	if out.Events == nil {
		out.Events = []event.Event{}
	}
	if out.Intervals == nil {
		out.Intervals = []Interval{}
	}
	if out.Violations == nil {
		out.Violations = []Violation{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}
