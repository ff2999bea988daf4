package console

import (
	"encoding/json"
	"sync"
)

// maxEvents is how many timeline entries the console keeps.
const maxEvents = 2000

// hub holds what the model published: the newest view of each recipe and
// the timeline. Subscribers (browsers) are told that something changed and
// take the newest views themselves, so the model never waits for them: a
// slow subscriber skips intermediate views, never the newest one, and
// loses no timeline entry it has room for. It is safe for concurrent use.
type hub struct {
	mu      sync.Mutex
	views   map[string][]byte // path → encoded View; nil: removed
	events  []Event           // the newest maxEvents entries
	seq     int64             // Seq of the newest event
	subs    map[*sub]struct{}
	settled bool   // the first walk is done
	failure string // why the model stopped, if it did
	offline bool   // the Session is out of contact with ZooKeeper
}

// sub is one subscriber's queue: the paths changed since it last took, and
// the sequence number of the last event it took.
type sub struct {
	notify  chan struct{}
	changed map[string]struct{}
	seen    int64
	status  bool // the status changed
}

func newHub() *hub {
	return &hub{views: map[string][]byte{}, subs: map[*sub]struct{}{}}
}

func (h *hub) poke(f func(s *sub)) {
	for s := range h.subs {
		f(s)
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

func (h *hub) set(path string, raw []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.views[path] = raw
	h.poke(func(s *sub) { s.changed[path] = struct{}{} })
}

func (h *hub) remove(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.views, path)
	h.poke(func(s *sub) { s.changed[path] = struct{}{} })
}

func (h *hub) event(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e.Seq = h.seq
	if len(h.events) == maxEvents {
		h.events = append(h.events[:0:0], h.events[1:]...)
	}
	h.events = append(h.events, e)
	h.poke(func(*sub) {})
}

func (h *hub) ready() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.settled {
		h.settled = true
		h.poke(func(s *sub) { s.status = true })
	}
}

func (h *hub) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failure = "session ended: " + err.Error()
	h.poke(func(s *sub) { s.status = true })
}

// connected records whether the Session is in contact with ZooKeeper.
func (h *hub) connected(ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.offline == !ok {
		return
	}
	h.offline = !ok
	h.poke(func(s *sub) { s.status = true })
}

// resume forgets the failure of a model that a new one replaces.
func (h *hub) resume() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failure = ""
	h.poke(func(s *sub) { s.status = true })
}

// subscribe adds a subscriber that starts with everything as changed.
func (h *hub) subscribe() *sub {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &sub{notify: make(chan struct{}, 1), changed: map[string]struct{}{}, status: true}
	for p := range h.views {
		s.changed[p] = struct{}{}
	}
	s.notify <- struct{}{}
	h.subs[s] = struct{}{}
	return s
}

func (h *hub) unsubscribe(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// Status is the console's own state, sent to the page.
type Status struct {
	Settled bool `json:"settled"`
	// Connected is false while the console's Session is out of contact
	// with ZooKeeper, and after it ended: what is shown is then the last
	// known state.
	Connected bool     `json:"connected"`
	Failure   string   `json:"failure,omitempty"`
	Admin     bool     `json:"admin"`
	Roots     []string `json:"roots"`
}

// batch is what a subscriber takes at once.
type batch struct {
	status *Status
	views  map[string][]byte // nil value: removed
	events []Event
}

// status fills in the model's part of st.
func (h *hub) status(st Status) Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	st.Settled, st.Failure, st.Connected = h.settled, h.failure, !h.offline
	return st
}

// take empties s's queue.
func (h *hub) take(s *sub, st Status) batch {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b batch
	if s.status {
		st.Settled, st.Failure, st.Connected = h.settled, h.failure, !h.offline
		b.status, s.status = &st, false
	}
	if len(s.changed) > 0 {
		b.views = make(map[string][]byte, len(s.changed))
		for p := range s.changed {
			b.views[p] = h.views[p]
		}
		clear(s.changed)
	}
	if n := int(min(h.seq-s.seen, int64(len(h.events)))); n > 0 {
		b.events = append([]Event(nil), h.events[len(h.events)-n:]...)
	}
	s.seen = h.seq
	return b
}

// snapshot returns every view and the timeline, for /api/state.
func (h *hub) snapshot() (map[string]json.RawMessage, []Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := make(map[string]json.RawMessage, len(h.views))
	for p, raw := range h.views {
		vs[p] = raw
	}
	return vs, append([]Event(nil), h.events...)
}

// view returns the newest view of path, decoded.
func (h *hub) view(path string) (*View, bool) {
	h.mu.Lock()
	raw, ok := h.views[path]
	h.mu.Unlock()
	if !ok {
		return nil, false
	}
	var v View
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	return &v, true
}
