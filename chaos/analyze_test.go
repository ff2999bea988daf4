package chaos

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
)

func ev(at int64, c string, k event.Kind, r string, token int64) event.Event {
	return event.Event{At: at, Client: c, Kind: k, Resource: r, Token: token}
}

func feed(events ...event.Event) (*tracker, *oracle.History) {
	t, h := newTracker(), &oracle.History{}
	for _, e := range events {
		t.observe(e)
		h.Add(e)
	}
	return t, h
}

func TestSettled(t *testing.T) {
	const s = int64(time.Second)
	tests := []struct {
		name      string
		w         Workload
		events    []event.Event
		live, res []string
		since     int64
		ok        bool
		at        int64
	}{
		{"balanced", RebalanceIncremental, []event.Event{
			ev(1*s, "a", event.Acquire, "r1", 1), ev(2*s, "b", event.Acquire, "r2", 2), ev(3*s, "a", event.Acquire, "r3", 3)},
			[]string{"a", "b"}, []string{"r1", "r2", "r3"}, 2 * s, true, 3 * s},
		{"unbalanced", RebalanceGlobal, []event.Event{
			ev(1*s, "a", event.Acquire, "r1", 1), ev(2*s, "a", event.Acquire, "r2", 2), ev(3*s, "a", event.Acquire, "r3", 3)},
			[]string{"a", "b"}, []string{"r1", "r2", "r3"}, 0, false, 0},
		{"crashed holder", RebalanceResource, []event.Event{
			ev(1*s, "a", event.Acquire, "r1", 1), ev(2*s, "b", event.Acquire, "r2", 2), ev(3*s, "a", event.Crash, "", 0)},
			[]string{"a", "b"}, []string{"r1", "r2"}, 0, false, 0},
		{"one leader each", Election, []event.Event{
			ev(1*s, "a", event.Acquire, "e1", 1), ev(2*s, "b", event.Acquire, "e2", 2), ev(3*s, "b", event.Release, "e2", 0),
			ev(4*s, "a", event.Acquire, "e2", 4)},
			[]string{"a", "b", "c"}, []string{"e1", "e2"}, 5 * s, true, 5 * s},
		{"election without a leader", Election, []event.Event{
			ev(1*s, "a", event.Acquire, "e1", 1)},
			[]string{"a", "b"}, []string{"e1", "e2"}, 0, false, 0},
		{"leader of a removed election", Election, []event.Event{
			ev(1*s, "a", event.Acquire, "e1", 1), ev(1*s, "a", event.Acquire, "e9", 1)},
			[]string{"a"}, []string{"e1"}, 0, false, 0},
		{"locks granted since", Lock, []event.Event{
			ev(1*s, "a", event.Acquire, "l1", 1), ev(2*s, "a", event.Release, "l1", 0),
			ev(3*s, "b", event.Acquire, "l1", 3), ev(4*s, "b", event.Release, "l1", 0),
			ev(5*s, "a", event.Acquire, "l2", 5)},
			[]string{"a", "b"}, []string{"l1", "l2"}, 2500 * int64(time.Millisecond), true, 5 * s},
		{"a client got nothing since", Lock, []event.Event{
			ev(1*s, "a", event.Acquire, "l1", 1), ev(2*s, "a", event.Release, "l1", 0),
			ev(3*s, "b", event.Acquire, "l1", 3), ev(4*s, "b", event.Release, "l1", 0),
			ev(5*s, "b", event.Acquire, "l2", 5)},
			[]string{"a", "b"}, []string{"l1", "l2"}, 2500 * int64(time.Millisecond), false, 0},
		{"a lock held twice", Lock, []event.Event{
			ev(1*s, "a", event.Acquire, "l1", 1), ev(2*s, "b", event.Acquire, "l1", 2)},
			[]string{"a", "b"}, []string{"l1"}, 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, _ := feed(tt.events...)
			ok, at, why := settled(tt.w, tr, tt.live, tt.res, tt.since)
			if ok != tt.ok || at != tt.at {
				t.Fatalf("settled = %v at %d (%s), want %v at %d", ok, at, why, tt.ok, tt.at)
			}
			if !ok && why == "" {
				t.Fatal("no reason given")
			}
			t.Log(why)
		})
	}
}

// TestAnalyze: a paused holder fenced off is excused and its refused uses
// counted; the same overlap by a client that was never paused, or with an
// accepted use, or in a run judged unfenced, is a violation.
func TestAnalyze(t *testing.T) {
	const s = int64(time.Second)
	T := 4 * time.Second
	fenced := []event.Event{
		ev(1*s, "a", event.Acquire, "r1", 5), ev(1*s+1, "a", event.Use, "r1", 5),
		ev(2*s, "a", event.Pause, "", 0),
		ev(7*s, "b", event.Acquire, "r1", 9), ev(7*s+1, "b", event.Use, "r1", 9),
		ev(8*s, "a", event.Resume, "", 0),
		ev(8*s+1, "a", event.Reject, "r1", 5),
		ev(8*s+2, "a", event.Release, "r1", 0),
	}
	_, h := feed(fenced...)
	records := []FaultRecord{{N: 1, Fault: Fault{Kind: PauseLong}, OK: true, Converge: time.Second},
		{N: 2, Fault: Fault{Kind: KillClient}, OK: true, Converge: 3 * time.Second},
		{N: 3, Fault: Fault{Kind: KillClient}, OK: false}}
	st, vs := analyze(h, records, T, false)
	if len(vs) != 0 {
		t.Fatalf("violations %v", vs)
	}
	if st.Overlaps != 1 || st.FencedOverlaps != 1 || st.Rejects != 1 || st.RejectsAfterPause != 1 || st.Uses != 2 {
		t.Fatalf("stats %+v", st)
	}
	// Judged unfenced, the paused holder's overlap is a violation.
	if st, vs := analyze(h, records, T, true); len(vs) != 1 || vs[0].Kind != "overlap" || st.FencedOverlaps != 0 {
		t.Fatalf("unfenced: violations %v, stats %+v", vs, st)
	}
	if st.Faults != 3 || st.Converged != 2 || st.ConvergeMax != 3*time.Second || st.ConvergeP50 != time.Second ||
		st.ByKind[KillClient].Count != 2 || st.ByKind[KillClient].Converged != 1 {
		t.Fatalf("convergence stats %+v", st)
	}

	// Never paused: the same overlap is a double access.
	var unpaused []event.Event
	for _, e := range fenced {
		if e.Kind != event.Pause && e.Kind != event.Resume {
			unpaused = append(unpaused, e)
		}
	}
	_, h = feed(unpaused...)
	st, vs = analyze(h, nil, T, false)
	if len(vs) != 1 || vs[0].Kind != "overlap" || st.RejectsOther != 1 {
		t.Fatalf("unpaused: violations %v, stats %+v", vs, st)
	}

	// Paused, but the service accepted a stale use.
	_, h = feed(append(fenced[:len(fenced):len(fenced)], ev(7*s+5, "a", event.Use, "r1", 5))...)
	if _, vs = analyze(h, nil, T, false); len(vs) != 1 || vs[0].Kind != "overlap" {
		t.Fatalf("accepted stale use: violations %v", vs)
	}
}

// TestReportOutputs renders a small report as JSON and as a timeline.
func TestReportOutputs(t *testing.T) {
	const s = int64(time.Second)
	_, h := feed(
		ev(1*s, "c1", event.Acquire, "r<1>", 5), ev(1*s+1, "c1", event.Use, "r<1>", 5),
		ev(2*s, "c1", event.Pause, "", 0),
		ev(7*s, "c2", event.Acquire, "r<1>", 9),
		ev(8*s, "c1", event.Resume, "", 0), ev(8*s+1, "c1", event.Reject, "r<1>", 5),
		ev(8*s+2, "c1", event.Release, "r<1>", 0),
		ev(9*s, "c3", event.Acquire, "r2", 11), ev(9*s+5, "c1", event.Acquire, "r2", 12), ev(10*s, "c3", event.Crash, "", 0),
	)
	st, vs := analyze(h, nil, 4*time.Second, false)
	r := &Report{Workload: RebalanceIncremental, Seed: 3, Start: 0, End: 11 * s, Stats: st, Violations: vs,
		Faults: []FaultRecord{{N: 1, Fault: Fault{Kind: PauseLong}, Detail: "pause c1 for 6s", Start: 2 * s, Healed: 8 * s,
			Converged: 9 * s, Converge: time.Second, OK: true}},
		Spans:  []Span{{Target: "c1", What: "paused", From: 2 * s, To: 8 * s, Fault: 1}, {Target: "zk1", What: "down", From: 3 * s, To: 4 * s}},
		Events: h.Events(), Intervals: h.Intervals(), Command: "go run ./chaos/cmd/chaos -seed 3",
		Final: FinalState{OK: true, Resources: []string{"r<1>", "r2"}}, Problems: []string{"a <problem>"}}
	r.Verdict = r.verdict()
	if !strings.HasPrefix(r.Verdict, "FAIL rebalance-incremental seed=3: 1 double accesses accepted") {
		t.Fatalf("verdict %q", r.Verdict)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Events) != len(r.Events) || len(back.Violations) != 1 || back.Faults[0].Converge != time.Second {
		t.Fatalf("JSON round trip lost something: %+v", back)
	}
	var page bytes.Buffer
	if err := r.WriteTimeline(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{"<svg", "</svg>", "r&lt;1&gt;", "process c1", "process zk1", "#1 pause c1",
		"c1 refused r&lt;1&gt;", "overlap", "a &lt;problem&gt;", "go run ./chaos/cmd/chaos -seed 3", "converged at 9.000s"} {
		if !strings.Contains(html, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
	if strings.Contains(html, "r<1>") || strings.Contains(html, "<problem>") {
		t.Error("timeline does not escape names")
	}
}
