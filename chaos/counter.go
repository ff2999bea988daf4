package chaos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
)

// The counter workload's harness side (see client_counter.go for the
// writers): convergence is every live writer doing a whole round, every
// write of it done, after the fault; at the end, once every writer has
// stopped, the harness reads the counter, the round nodes and the list,
// and checkCounter holds them against the history.

// counterTracker follows the writers' rounds while the run goes on. It is
// safe for concurrent use.
type counterTracker struct {
	mu     sync.Mutex
	failed map[string]map[int64]bool // client -> rounds with a write not done
	good   map[string][]int64        // client -> when each round done in full ended
	final  *counterState             // read at the end
}

func newCounterTracker() *counterTracker {
	return &counterTracker{failed: map[string]map[int64]bool{}, good: map[string][]int64{}}
}

func (t *counterTracker) observe(e event.Event) {
	if e.Kind != event.Note {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.Detail == noteRound {
		if !t.failed[e.Client][e.Token] {
			t.good[e.Client] = append(t.good[e.Client], e.At)
		}
		delete(t.failed[e.Client], e.Token)
		return
	}
	if _, out, ok := parseWrite(e.Detail); ok && out != outBegin && out != outOK && out != outExists {
		if t.failed[e.Client] == nil {
			t.failed[e.Client] = map[int64]bool{}
		}
		t.failed[e.Client][e.Token] = true
	}
}

// parseWrite splits a write event's Detail into operation and outcome.
func parseWrite(detail string) (op, out string, ok bool) {
	for _, op := range []string{opCreate, opAdd, opUpdate} {
		if rest, found := strings.CutPrefix(detail, op); found {
			switch rest {
			case outBegin, outOK, outNo, outExists, outUnknown:
				return op, rest, true
			}
		}
	}
	return "", "", false
}

// settleCounter reports whether every live writer has done a round in full
// since since; at is when the last of them did.
func (h *harness) settleCounter(since int64) (ok bool, at int64, why string) {
	t := h.counter
	t.mu.Lock()
	defer t.mu.Unlock()
	return h.everyLive(since, "no round done in full since the fault by ", func(c string) (int64, bool) {
		rounds := t.good[c]
		i, _ := slices.BinarySearch(rounds, since+1)
		if i == len(rounds) {
			return 0, false
		}
		return rounds[i], true
	})
}

// counterState is what the counter workload left in ZooKeeper.
type counterState struct {
	Count int32
	Slots map[int64]bool // rounds whose node exists
	List  []string
	Err   string // why it could not be read
}

// readCounterState reads the counter, the round nodes and the list, once
// every writer has stopped.
func (h *harness) readCounterState() {
	st := &counterState{Slots: map[int64]bool{}}
	err := h.operate("read the counter workload's nodes", func(ctx context.Context, s *zkcoord.Session) error {
		c, err := counter.New(s, counterPath(h.root))
		if err != nil {
			return err
		}
		cur, err := c.Get(ctx)
		if err != nil {
			return err
		}
		st.Count = cur.Value
		kids, _, err := s.Children(ctx, slotsPath(h.root))
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return err
		}
		clear(st.Slots)
		for _, k := range kids {
			n, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				return fmt.Errorf("unexpected node %s under %s", k, slotsPath(h.root))
			}
			st.Slots[n] = true
		}
		data, _, err := s.Get(ctx, listPath(h.root))
		switch {
		case errors.Is(err, zkcoord.ErrNoNode):
			st.List = nil
			return nil
		case err != nil:
			return err
		}
		return json.Unmarshal(data, &st.List)
	})
	if err != nil {
		h.problem("%v", err)
		st.Err = err.Error()
	}
	h.counter.mu.Lock()
	h.counter.final = st
	h.counter.mu.Unlock()
}

// CounterStats sum a counter run up.
type CounterStats struct {
	// Count is the counter's value at the end; Adds were acknowledged,
	// AddsUnknown had an unknown outcome (reported so by the library, or
	// cut short by the writer's death) and may count or not.
	Count       int32 `json:"count"`
	Adds        int   `json:"adds"`
	AddsUnknown int   `json:"adds_unknown"`
	// Rounds whose node exists at the end; Creates acknowledged (one per
	// node at most), CreatesFound (the node was there), CreatesUnknown.
	Nodes          int `json:"nodes"`
	Creates        int `json:"creates"`
	CreatesFound   int `json:"creates_found"`
	CreatesUnknown int `json:"creates_unknown"`
	// Updates of the list acknowledged, and with an unknown outcome;
	// Listed ids in the list at the end.
	Updates        int `json:"updates"`
	UpdatesUnknown int `json:"updates_unknown"`
	Listed         int `json:"listed"`
}

// checkCounter holds the end state against the history: the count is at
// least the acknowledged increments and at most those plus the unknown
// ones; no round node was created by two writers, or exists with no
// create that may have made it; every acknowledged update of the list is
// in it, once, and the list holds nothing never written.
func checkCounter(events []event.Event, end *counterState) (CounterStats, []oracle.Violation) {
	var st CounterStats
	var out []oracle.Violation
	if end == nil || end.Err != "" {
		return st, out // the harness reported why as a problem
	}
	type key struct {
		client string
		round  int64
	}
	type write struct {
		begun, ended bool
		out          string
		at           int64
	}
	writes := map[string]map[key]*write{opAdd: {}, opCreate: {}, opUpdate: {}}
	for _, e := range events {
		if e.Kind != event.Note {
			continue
		}
		op, o, ok := parseWrite(e.Detail)
		if !ok {
			continue
		}
		k := key{e.Client, e.Token}
		w := writes[op][k]
		if w == nil {
			w = &write{}
			writes[op][k] = w
		}
		if o == outBegin {
			w.begun = true
			continue
		}
		w.ended, w.out, w.at = true, o, e.At
	}
	// A write begun and never ended was cut short by its writer's death:
	// its outcome is unknown.
	unknown := func(w *write) bool { return !w.ended || w.out == outUnknown }

	st.Count = end.Count
	for _, w := range writes[opAdd] {
		switch {
		case w.ended && w.out == outOK:
			st.Adds++
		case unknown(w):
			st.AddsUnknown++
		}
	}
	if int(end.Count) < st.Adds {
		out = append(out, oracle.Violation{Kind: "increment lost", Resource: "count",
			Detail: fmt.Sprintf("count %d, but %d increments acknowledged", end.Count, st.Adds)})
	}
	if int(end.Count) > st.Adds+st.AddsUnknown {
		out = append(out, oracle.Violation{Kind: "increment invented", Resource: "count",
			Detail: fmt.Sprintf("count %d, but %d increments acknowledged and %d unknown", end.Count, st.Adds, st.AddsUnknown)})
	}

	creators := map[int64][]key{}
	acked := map[key]int64{} // when each create was acknowledged
	maybe := map[int64]bool{}
	for k, w := range writes[opCreate] {
		switch {
		case w.ended && w.out == outOK:
			st.Creates++
			creators[k.round] = append(creators[k.round], k)
			acked[k] = w.at
		case w.ended && w.out == outExists:
			st.CreatesFound++
		case unknown(w):
			st.CreatesUnknown++
			maybe[k.round] = true
		}
	}
	st.Nodes = len(end.Slots)
	rounds := slices.Sorted(maps.Keys(creators))
	for _, r := range rounds {
		cs := creators[r]
		if len(cs) > 1 {
			slices.SortFunc(cs, func(a, b key) int { return cmp.Compare(acked[a], acked[b]) })
			out = append(out, oracle.Violation{Kind: "created twice", Resource: strconv.FormatInt(r, 10),
				ClientA: cs[0].client, ClientB: cs[1].client, At: acked[cs[1]],
				Detail: fmt.Sprintf("round %d's node: %d writers were told they created it", r, len(cs))})
		}
		if !end.Slots[r] {
			out = append(out, oracle.Violation{Kind: "create lost", Resource: strconv.FormatInt(r, 10),
				ClientA: cs[0].client, Detail: fmt.Sprintf("round %d's node was created, and is gone", r)})
		}
	}
	for r := range end.Slots {
		if len(creators[r]) == 0 && !maybe[r] {
			out = append(out, oracle.Violation{Kind: "created by nobody", Resource: strconv.FormatInt(r, 10),
				Detail: fmt.Sprintf("round %d's node exists, but no create of it succeeded or had an unknown outcome", r)})
		}
	}

	listed := map[string]int{}
	for _, id := range end.List {
		listed[id]++
	}
	st.Listed = len(end.List)
	ids := map[string]*write{}
	for k, w := range writes[opUpdate] {
		ids[listID(k.client, k.round)] = w
		switch {
		case w.ended && w.out == outOK:
			st.Updates++
			if listed[listID(k.client, k.round)] == 0 {
				out = append(out, oracle.Violation{Kind: "update lost", Resource: "list", ClientA: k.client, At: w.at,
					Detail: fmt.Sprintf("%s acknowledged, not in the list", listID(k.client, k.round))})
			}
		case unknown(w):
			st.UpdatesUnknown++
		}
	}
	names := slices.Sorted(maps.Keys(listed))
	for _, id := range names {
		switch {
		case ids[id] == nil:
			out = append(out, oracle.Violation{Kind: "update invented", Resource: "list",
				Detail: fmt.Sprintf("%s in the list, never written", id)})
		case listed[id] > 1:
			out = append(out, oracle.Violation{Kind: "update applied twice", Resource: "list",
				Detail: fmt.Sprintf("%s in the list %d times", id, listed[id])})
		}
	}
	return st, out
}
