package oracle

import (
	"bufio"
	"encoding/json"
	"errors"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// history builds a History from events written in order with explicit times.
func history(events ...event.Event) *History {
	h := &History{}
	for _, e := range events {
		h.Add(e)
	}
	return h
}

func acq(at int64, c, r string, token int64) event.Event {
	return event.Event{At: at, Client: c, Kind: event.Acquire, Resource: r, Token: token}
}
func rel(at int64, c, r string) event.Event {
	return event.Event{At: at, Client: c, Kind: event.Release, Resource: r}
}
func ev(at int64, c string, k event.Kind) event.Event {
	return event.Event{At: at, Client: c, Kind: k}
}
func use(at int64, c, r string, token int64) event.Event {
	return event.Event{At: at, Client: c, Kind: event.Use, Resource: r, Token: token}
}

func kinds(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Kind)
	}
	return out
}

func TestCheckExclusive(t *testing.T) {
	tests := []struct {
		name   string
		events []event.Event
		want   []string // violation kinds
		hold   map[string][]string
	}{
		{name: "empty", hold: map[string][]string{}},
		{name: "clean handoff",
			events: []event.Event{acq(10, "a", "r1", 5), use(11, "a", "r1", 5), rel(20, "a", "r1"),
				acq(30, "b", "r1", 7), use(31, "b", "r1", 7)},
			hold: map[string][]string{"b": {"r1"}}},
		{name: "handoff at the same instant is not an overlap",
			events: []event.Event{acq(30, "b", "r1", 7), acq(10, "a", "r1", 5), rel(30, "a", "r1")},
			hold:   map[string][]string{"b": {"r1"}}},
		{name: "events added out of order are sorted",
			events: []event.Event{acq(30, "b", "r1", 0), rel(20, "a", "r1"), acq(10, "a", "r1", 0)},
			hold:   map[string][]string{"b": {"r1"}}},
		{name: "overlap",
			events: []event.Event{acq(10, "a", "r1", 5), acq(15, "b", "r1", 7), rel(20, "a", "r1")},
			want:   []string{"overlap"}, hold: map[string][]string{"b": {"r1"}}},
		{name: "overlap with a holder that never released",
			events: []event.Event{acq(10, "a", "r1", 0), acq(15, "b", "r1", 0), rel(16, "b", "r1"), acq(17, "c", "r1", 0)},
			want:   []string{"overlap", "overlap"}, hold: map[string][]string{"a": {"r1"}, "c": {"r1"}}},
		{name: "other resources do not interfere",
			events: []event.Event{acq(10, "a", "r1", 0), acq(11, "b", "r2", 0), acq(12, "a", "r3", 0)},
			hold:   map[string][]string{"a": {"r1", "r3"}, "b": {"r2"}}},
		{name: "crash ends every holding",
			events: []event.Event{acq(10, "a", "r1", 1), acq(11, "a", "r2", 2), ev(20, "a", event.Crash),
				acq(30, "b", "r1", 3), acq(31, "b", "r2", 4)},
			hold: map[string][]string{"b": {"r1", "r2"}}},
		{name: "successor before the crash is an overlap",
			events: []event.Event{acq(10, "a", "r1", 1), acq(15, "b", "r1", 3), ev(20, "a", event.Crash)},
			want:   []string{"overlap"}, hold: map[string][]string{"b": {"r1"}}},
		{name: "restart after a crash with the same name",
			events: []event.Event{acq(10, "a", "r1", 1), ev(20, "a", event.Crash), acq(30, "a", "r1", 3), rel(40, "a", "r1"), ev(41, "a", event.Exit)},
			hold:   map[string][]string{}},
		{name: "pause does not end a holding",
			events: []event.Event{acq(10, "a", "r1", 1), ev(12, "a", event.Pause), acq(20, "b", "r1", 3), ev(30, "a", event.Resume), rel(31, "a", "r1")},
			want:   []string{"overlap"}, hold: map[string][]string{"b": {"r1"}}},
		{name: "token going backwards",
			events: []event.Event{acq(10, "a", "r1", 9), rel(20, "a", "r1"), acq(30, "b", "r1", 8)},
			want:   []string{"token"}, hold: map[string][]string{"b": {"r1"}}},
		{name: "same token, another client",
			events: []event.Event{acq(10, "a", "r1", 9), rel(20, "a", "r1"), acq(30, "b", "r1", 9)},
			want:   []string{"token"}, hold: map[string][]string{"b": {"r1"}}},
		{name: "same token, same client again",
			events: []event.Event{acq(10, "a", "r1", 9), rel(20, "a", "r1"), acq(30, "a", "r1", 9)},
			hold:   map[string][]string{"a": {"r1"}}},
		{name: "broken sequence",
			events: []event.Event{
				rel(5, "a", "r1"),                            // release of nothing
				acq(10, "a", "r1", 0), acq(11, "a", "r1", 0), // double acquire
				use(12, "b", "r1", 0), // use without holding
				{At: 13, Client: "c", Kind: event.Reject, Resource: "r1"}, // rejected use: fine
				{At: 14, Client: "c", Kind: event.Invalid, Detail: "@oracle {"},
				ev(15, "", event.Fault), ev(16, "", event.Quiet), ev(17, "x", event.Note),
			},
			want: []string{"sequence", "sequence", "sequence", "invalid"},
			hold: map[string][]string{"a": {"r1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(tt.events...)
			got := h.CheckExclusive()
			if !reflect.DeepEqual(kinds(got), tt.want) {
				t.Fatalf("violations %v, want kinds %v", got, tt.want)
			}
			for _, v := range got {
				t.Log(v)
			}
			if hold := h.Holdings(); !reflect.DeepEqual(hold, tt.hold) {
				t.Fatalf("Holdings = %v, want %v", hold, tt.hold)
			}
		})
	}
}

func TestOverlapDetails(t *testing.T) {
	h := history(acq(10, "a", "r1", 5), acq(15, "b", "r1", 7), rel(20, "a", "r1"))
	vs := h.CheckExclusive()
	if len(vs) != 1 {
		t.Fatalf("violations: %v", vs)
	}
	v := vs[0]
	if v.Resource != "r1" || v.ClientA != "a" || v.ClientB != "b" || v.At != 15 {
		t.Fatalf("violation %+v", v)
	}
	s := v.String()
	for _, want := range []string{"overlap", `"r1"`, `"a"`, `"b"`, "15", "[10, 20)", "5ns"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, missing %q", s, want)
		}
	}
}

func TestCheckFenced(t *testing.T) {
	slack := time.Duration(5)
	stale := []event.Event{
		acq(10, "a", "r1", 5), use(11, "a", "r1", 5),
		ev(12, "a", event.Pause),
		acq(20, "b", "r1", 7), use(21, "b", "r1", 7),
		ev(30, "a", event.Resume),
		{At: 31, Client: "a", Kind: event.Reject, Resource: "r1", Token: 5},
		rel(32, "a", "r1"),
	}
	tests := []struct {
		name   string
		events []event.Event
		want   []string
	}{
		{"paused holder refused by the fence", stale, nil},
		{"paused holder's use accepted", append(stale[:len(stale):len(stale)], use(31, "a", "r1", 5)), []string{"overlap"}},
		{"pause long before, beyond slack", []event.Event{
			acq(10, "a", "r1", 5), ev(11, "a", event.Pause), ev(12, "a", event.Resume),
			acq(20, "b", "r1", 7), rel(25, "a", "r1")}, []string{"overlap"}},
		{"resumed within slack", []event.Event{
			acq(10, "a", "r1", 5), ev(11, "a", event.Pause), ev(17, "a", event.Resume),
			acq(20, "b", "r1", 7), rel(25, "a", "r1")}, nil},
		{"never paused", []event.Event{
			acq(10, "a", "r1", 5), acq(20, "b", "r1", 7), rel(25, "a", "r1")}, []string{"overlap"}},
		{"still paused at the end", []event.Event{
			acq(10, "a", "r1", 5), ev(11, "a", event.Pause), acq(20, "b", "r1", 7)}, nil},
		{"sequence errors are never excused", append(stale[:len(stale):len(stale)], rel(40, "a", "r1")), []string{"sequence"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := history(tt.events...)
			if got := h.CheckFenced(slack); !reflect.DeepEqual(kinds(got), tt.want) {
				t.Fatalf("CheckFenced = %v, want kinds %v", got, tt.want)
			}
		})
	}
	if got := history(stale...).CheckExclusive(); !reflect.DeepEqual(kinds(got), []string{"overlap"}) {
		t.Fatalf("CheckExclusive on the stale history = %v, want the overlap", got)
	}
}

func TestCheckBalanced(t *testing.T) {
	clients := []string{"a", "b", "c"}
	resources := []string{"r1", "r2", "r3", "r4"}
	tests := []struct {
		name string
		hold map[string][]string
		ok   bool
	}{
		{"balanced", map[string][]string{"a": {"r1", "r2"}, "b": {"r3"}, "c": {"r4"}}, true},
		{"unbalanced", map[string][]string{"a": {"r1", "r2", "r3"}, "b": {"r4"}}, false},
		{"missing", map[string][]string{"a": {"r1"}, "b": {"r3"}, "c": {"r4"}}, false},
		{"double", map[string][]string{"a": {"r1", "r2"}, "b": {"r2", "r3"}, "c": {"r4"}}, false},
		{"dead holder", map[string][]string{"a": {"r1", "r2"}, "b": {"r3"}, "z": {"r4"}}, false},
		{"dead client holding nothing is fine", map[string][]string{"a": {"r1", "r2"}, "b": {"r3"}, "c": {"r4"}, "z": {}}, true},
		{"unknown resource", map[string][]string{"a": {"r1", "r2"}, "b": {"r3"}, "c": {"r4", "r9"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckBalanced(tt.hold, clients, resources)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckBalanced = %v, want ok=%v", err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrUnbalanced) {
					t.Fatalf("%v does not wrap ErrUnbalanced", err)
				}
				t.Log(err)
			}
		})
	}
	if err := CheckBalanced(nil, nil, resources); err != nil {
		t.Fatalf("no clients, nothing held: %v", err)
	}
	if err := CheckBalanced(map[string][]string{"a": {"r1"}}, nil, resources); err == nil {
		t.Fatal("no clients, something held: want an error")
	}
}

func TestFenced(t *testing.T) {
	h := &History{}
	f := NewFenced(h)
	steps := []struct {
		client string
		token  int64
		ok     bool
	}{
		{"a", 5, true}, {"a", 5, true}, {"b", 7, true}, {"a", 5, false}, {"c", 7, false}, {"b", 7, true}, {"c", 9, true}, {"b", 7, false},
	}
	for i, s := range steps {
		err := f.Use("r1", s.client, s.token)
		if (err == nil) != s.ok || (err != nil && !errors.Is(err, ErrFenced)) {
			t.Fatalf("step %d: Use(%s, %d) = %v, want ok=%v", i, s.client, s.token, err, s.ok)
		}
	}
	if err := f.Use("r2", "a", 1); err != nil {
		t.Fatalf("another resource: %v", err)
	}
	if tok, c, ok := f.Newest("r1"); !ok || tok != 9 || c != "c" {
		t.Fatalf("Newest = %d %q %v", tok, c, ok)
	}
	es := h.Events()
	if len(es) != len(steps)+1 {
		t.Fatalf("%d events, want %d", len(es), len(steps)+1)
	}
	for i, s := range steps {
		want := event.Use
		if !s.ok {
			want = event.Reject
		}
		if es[i].Kind != want || es[i].Client != s.client || es[i].Token != s.token {
			t.Fatalf("event %d = %v, want %s", i, es[i], want)
		}
	}
}

func TestLinesAndSink(t *testing.T) {
	e := event.Event{At: 42, Client: "p1", Kind: event.Acquire, Resource: "r\n1 \"x\"", Token: 7, Detail: "d"}
	got, err := event.ParseLine(e.Line() + "\n")
	if err != nil || got != e {
		t.Fatalf("ParseLine(Line()) = %+v, %v; want %+v", got, err, e)
	}
	if _, err := event.ParseLine("hello"); !errors.Is(err, event.ErrNotEvent) {
		t.Fatalf("plain line: %v", err)
	}
	for _, bad := range []string{event.LinePrefix, event.LinePrefix + "{", event.LinePrefix + `{"at":1}`, event.LinePrefix + `{"kind":"use","x":1}`,
		event.LinePrefix + `{"kind":"use"} {}`, event.LinePrefix + `{"kind":"use","at":"soon"}`} {
		if _, err := event.ParseLine(bad); !errors.Is(err, event.ErrBadLine) {
			t.Errorf("ParseLine(%q) = %v, want ErrBadLine", bad, err)
		}
	}

	// A process writes through an Emitter; the harness reads through Sink.
	pr, pw := io.Pipe()
	em := event.NewEmitter(pw, "")
	h := &History{}
	var other []string
	sink := h.Sink("proc-1", func(line string) { other = append(other, line) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			sink(sc.Text())
		}
	}()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if err := em.Emit(event.Event{Kind: event.Note, Detail: strings.Repeat("x", 100)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	io.WriteString(pw, "log line\n"+event.LinePrefix+"{broken\n")
	em.Emit(event.Event{Kind: event.Acquire, Resource: "r1", Client: "named"})
	pw.Close()
	<-done
	es := h.Events()
	if len(es) != 202 {
		t.Fatalf("%d events, want 202", len(es))
	}
	count := map[string]int{}
	for _, e := range es {
		count[e.Client+" "+string(e.Kind)]++
	}
	// The invalid line carries no time of its own: it is stamped on arrival.
	if want := map[string]int{"proc-1 note": 200, "proc-1 invalid": 1, "named acquire": 1}; !reflect.DeepEqual(count, want) {
		t.Fatalf("events %v, want %v", count, want)
	}
	if !reflect.DeepEqual(other, []string{"log line"}) {
		t.Fatalf("other lines: %q", other)
	}
	if vs := h.CheckExclusive(); len(vs) != 1 || vs[0].Kind != "invalid" {
		t.Fatalf("violations: %v", vs)
	}
}

func TestNow(t *testing.T) {
	t0, w0 := event.Now(), time.Now()
	time.Sleep(20 * time.Millisecond) // measuring the clock, not ordering events
	t1, w1 := event.Now(), time.Now()
	d, w := time.Duration(t1-t0), w1.Sub(w0)
	if d <= 0 || d < w/2 || d > w*2+10*time.Millisecond {
		t.Fatalf("Now advanced %v while the wall clock advanced %v", d, w)
	}
}

func TestAddStampsAndConcurrency(t *testing.T) {
	h := &History{}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				h.Add(event.Event{Client: "c", Kind: event.Note})
				h.Mark(event.Fault, "", "x")
			}
		}()
	}
	wg.Wait()
	if h.Len() != 1600 {
		t.Fatalf("Len = %d", h.Len())
	}
	es := h.Events()
	for i, e := range es {
		if e.At == 0 || (i > 0 && e.At < es[i-1].At) {
			t.Fatalf("event %d: %v", i, e)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	h := history(acq(10, "a", "r1", 5), acq(15, "b", "r1", 7), rel(20, "a", "r1"), ev(21, "", event.Quiet))
	var sb strings.Builder
	if err := h.WriteJSON(&sb); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Events     []event.Event
		Intervals  []map[string]any
		Violations []Violation
	}
	if err := json.Unmarshal([]byte(sb.String()), &got); err != nil {
		t.Fatalf("%v\n%s", err, sb.String())
	}
	if len(got.Events) != 4 || len(got.Intervals) != 2 || len(got.Violations) != 1 {
		t.Fatalf("decoded %+v", got)
	}
	if _, ok := got.Intervals[1]["end"]; ok || got.Intervals[1]["open"] != true {
		t.Fatalf("open interval: %v", got.Intervals[1])
	}
	if got.Intervals[0]["end"] != float64(20) {
		t.Fatalf("closed interval: %v", got.Intervals[0])
	}
	var empty strings.Builder
	if err := (&History{}).WriteJSON(&empty); err != nil || !strings.Contains(empty.String(), `"events": []`) {
		t.Fatalf("empty history: %v %s", err, empty.String())
	}
}

// TestBefore: a history whose latest events arrived before another
// process's earlier ones shows a false overlap; cut at a time up to which
// every process has delivered, it is exact, and real overlaps remain.
func TestBefore(t *testing.T) {
	// b's acquire at 30 has been read, a's release at 20 not yet.
	lagging := history(acq(10, "a", "r1", 5), acq(30, "b", "r1", 7))
	if vs := lagging.CheckExclusive(); len(vs) != 1 || vs[0].Kind != "overlap" {
		t.Fatalf("lagging history: %v, want the false overlap", vs)
	}
	cut := lagging.Before(20)
	if vs := cut.CheckExclusive(); len(vs) != 0 {
		t.Fatalf("cut at 20: %v", vs)
	}
	if got := cut.Holdings(); !reflect.DeepEqual(got, map[string][]string{"a": {"r1"}}) {
		t.Fatalf("holdings before 20: %v", got)
	}
	if cut.Len() != 1 || lagging.Len() != 2 {
		t.Fatalf("lengths %d and %d, want 1 and 2", cut.Len(), lagging.Len())
	}

	overlapping := history(acq(10, "a", "r1", 5), rel(20, "a", "r1"), acq(15, "b", "r1", 7), acq(40, "c", "r2", 1))
	if vs := overlapping.Before(16).CheckExclusive(); len(vs) != 1 || vs[0].ClientB != "b" {
		t.Fatalf("real overlap cut at 16: %v", vs)
	}
	if vs := overlapping.Before(15).CheckExclusive(); len(vs) != 0 {
		t.Fatalf("cut at 15 (b's acquire excluded): %v", vs)
	}
	if got := overlapping.Before(41).Holdings(); !reflect.DeepEqual(got, map[string][]string{"b": {"r1"}, "c": {"r2"}}) {
		t.Fatalf("holdings before 41: %v", got)
	}
}

// TestWriteLine: a line written with WriteLine follows every event emitted
// before it and reaches the Sink's next function, not the history.
func TestWriteLine(t *testing.T) {
	var buf strings.Builder
	em := event.NewEmitter(&buf, "p")
	if err := em.Emit(event.Event{Kind: event.Acquire, Resource: "r1"}); err != nil {
		t.Fatal(err)
	}
	if err := em.WriteLine("synced 1\n"); err != nil {
		t.Fatal(err)
	}
	if err := em.Emit(event.Event{Kind: event.Release, Resource: "r1"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 || lines[1] != "synced 1" {
		t.Fatalf("lines %q", lines)
	}
	h := &History{}
	var other []string
	sink := h.Sink("p", func(line string) { other = append(other, line) })
	for _, l := range lines {
		sink(l)
	}
	if h.Len() != 2 || !reflect.DeepEqual(other, []string{"synced 1"}) {
		t.Fatalf("%d events, other lines %q", h.Len(), other)
	}
}

// Problems keeps every problem, in order, from concurrent writers.
func TestProblems(t *testing.T) {
	var p Problems
	if got := p.List(); len(got) != 0 {
		t.Fatalf("new Problems: %v", got)
	}
	if msg := p.Addf("client %d would not start", 3); msg != "client 3 would not start" {
		t.Fatalf("Addf returned %q", msg)
	}
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() { p.Addf("concurrent %d", i); done <- struct{}{} }()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
	got := p.List()
	if len(got) != 5 || got[0] != "client 3 would not start" {
		t.Fatalf("List: %q", got)
	}
	got[0] = "changed"
	if p.List()[0] != "client 3 would not start" {
		t.Fatal("List shares its slice with Problems")
	}
}
