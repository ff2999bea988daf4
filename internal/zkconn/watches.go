package zkconn

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/wire"
)

// Event is what a Watch receives: a node event from the server (Type other
// than wire.EventNone, State wire.StateSyncConnected) or a change of the
// connection (Type wire.EventNone and State wire.StateDisconnected,
// wire.StateSyncConnected after a re-attach, wire.StateExpired,
// wire.StateAuthFailed or wire.StateClosed). Zxid is the ReplyHeader's
// zxid of the frame that carried a node event: the zxid of the change on
// servers from 3.9 on, -1 on 3.8 (seen in this package's tests).
type Event struct {
	Type  wire.EventType
	State wire.State
	Path  string
	Zxid  int64
}

// WatchKind says which of ZooKeeper's watch tables a Watch is in.
type WatchKind int

// The watch tables of ZooKeeper's client (ZKWatchManager).
const (
	// KindSession receives only connection events: the client's own.
	KindSession WatchKind = iota
	// KindData is a one-shot watch left by getData, or by exists on a
	// node that exists.
	KindData
	// KindExist is a one-shot watch left by exists on a missing node.
	KindExist
	// KindChild is a one-shot watch left by getChildren.
	KindChild
	// KindPersistent is a watch set by addWatch that stays until removed.
	KindPersistent
	// KindPersistentRecursive is KindPersistent for the node and all its
	// descendants (no NodeChildrenChanged events).
	KindPersistentRecursive
)

// Watch receives the events of one watch, in the order the server sent
// them relative to replies: an event is in the Watch's queue before the
// reply to any request written after it is returned. Its queue is
// unbounded, so a slow reader never stalls the connection.
//
// A one-shot watch ends with its node event; every watch ends with an
// event of State wire.StateExpired, wire.StateAuthFailed or
// wire.StateClosed when the client ends, and a persistent watch with
// wire.EventPersistentWatchRemoved (a one-shot with
// wire.EventDataWatchRemoved or wire.EventChildWatchRemoved) when
// RemoveWatches removes it. A disconnect is an event of State
// wire.StateDisconnected; the watch stays, and is armed again on the
// next connection. A Watch is safe for concurrent use.
type Watch struct {
	kind WatchKind // changed only before the watch is handed out
	path string

	q *fifo.Queue[Event]

	mu      sync.Mutex
	pending []Event
	fn      func(Event) // set by Notify
}

func newWatch(kind WatchKind, path string) *Watch {
	return &Watch{kind: kind, path: path, q: fifo.New[Event]()}
}

// Kind returns the table the watch is in: for exists, KindData when the
// node existed and KindExist when it did not.
func (w *Watch) Kind() WatchKind { return w.kind }

// Path returns the watched path ("" for the session's watch).
func (w *Watch) Path() string { return w.path }

// Notify hands the watch's events to fn from now on, in order: the events
// queued so far at once, on the caller's goroutine, and every later one on
// the client's dispatcher goroutine as it arrives, so fn must not block
// and must not call the client or the watch. Next and TryNext then find
// nothing.
func (w *Watch) Notify(fn func(Event)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range append(w.pending, w.q.PopAll()...) {
		fn(e)
	}
	w.pending = nil
	w.fn = fn
}

// deliver queues e for the watch's reader, or hands it to its Notify
// function.
func (w *Watch) deliver(e Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fn != nil {
		w.fn(e)
		return
	}
	w.q.Push(e)
}

// Ready receives a value when events were queued since it last did. Take
// events with TryNext until it reports none before waiting on Ready again.
func (w *Watch) Ready() <-chan struct{} { return w.q.Ready() }

// TryNext returns the oldest event not yet taken, if there is one.
func (w *Watch) TryNext() (Event, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, w.q.PopAll()...)
	if len(w.pending) == 0 {
		return Event{}, false
	}
	e := w.pending[0]
	w.pending = w.pending[1:]
	return e, true
}

// Next waits for the oldest event not yet taken, until ctx ends.
func (w *Watch) Next(ctx context.Context) (Event, error) {
	for {
		if e, ok := w.TryNext(); ok {
			return e, nil
		}
		select {
		case <-w.q.Ready():
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// registry holds the watches of a client by kind and path, as
// ZKWatchManager does. It is changed only by the dispatcher, in the order
// of the replies and events, and read by the connection loop between
// connections.
type registry struct {
	mu      sync.Mutex
	session []*Watch
	tables  [KindPersistentRecursive + 1]map[string][]*Watch
}

func newRegistry() *registry {
	r := &registry{}
	for k := KindData; k <= KindPersistentRecursive; k++ {
		r.tables[k] = map[string][]*Watch{}
	}
	return r
}

func (r *registry) add(w *Watch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w.kind == KindSession {
		r.session = append(r.session, w)
		return
	}
	r.tables[w.kind][w.path] = append(r.tables[w.kind][w.path], w)
}

// take removes and returns the one-shot watches of kind on path.
// drop removes the one watch w, reporting whether it was registered.
func (r *registry) drop(w *Watch) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w.kind == KindSession {
		return false
	}
	ws := r.tables[w.kind][w.path]
	i := slices.Index(ws, w)
	if i < 0 {
		return false
	}
	ws = slices.Delete(ws, i, i+1)
	if len(ws) == 0 {
		delete(r.tables[w.kind], w.path)
	} else {
		r.tables[w.kind][w.path] = ws
	}
	return true
}

func (r *registry) take(kind WatchKind, path string) []*Watch {
	ws := r.tables[kind][path]
	delete(r.tables[kind], path)
	return ws
}

// materialize returns the watches a node event goes to, removing the
// one-shot ones, as ZKWatchManager.materialize does.
func (r *registry) materialize(e Event) []*Watch {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Watch
	switch e.Type {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		out = append(out, r.take(KindData, e.Path)...)
		out = append(out, r.take(KindExist, e.Path)...)
	case wire.EventNodeChildrenChanged:
		out = append(out, r.take(KindChild, e.Path)...)
	case wire.EventNodeDeleted:
		out = append(out, r.take(KindData, e.Path)...)
		out = append(out, r.take(KindExist, e.Path)...)
		out = append(out, r.take(KindChild, e.Path)...)
	default:
		return nil
	}
	out = append(out, r.tables[KindPersistent][e.Path]...)
	if e.Type != wire.EventNodeChildrenChanged {
		for p := e.Path; ; p = Parent(p) {
			out = append(out, r.tables[KindPersistentRecursive][p]...)
			if p == "/" {
				break
			}
		}
	}
	return out
}

// Parent returns the parent of a path ("/" for "/" and top-level nodes).
// It is zkcoord.Parent, here for the connection's own use.
func Parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// all returns every watch, the session's first.
func (r *registry) all() []*Watch {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]*Watch(nil), r.session...)
	for k := KindData; k <= KindPersistentRecursive; k++ {
		for _, ws := range r.tables[k] {
			out = append(out, ws...)
		}
	}
	return out
}

// clear removes every watch and returns them, for the client's end.
func (r *registry) clear() []*Watch {
	out := r.all()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.session = nil
	for k := KindData; k <= KindPersistentRecursive; k++ {
		r.tables[k] = map[string][]*Watch{}
	}
	return out
}

// remove takes the watches of type t on path out of the tables (the
// removeWatches request succeeded) and returns them with the event each
// receives, as ZKWatchManager.removeWatcher does.
func (r *registry) remove(path string, t wire.WatcherType) map[*Watch]wire.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[*Watch]wire.EventType{}
	takeAs := func(kind WatchKind, ev wire.EventType) {
		for _, w := range r.take(kind, path) {
			out[w] = ev
		}
	}
	if t == wire.WatcherChildren || t == wire.WatcherAny {
		takeAs(KindChild, wire.EventChildWatchRemoved)
	}
	if t == wire.WatcherData || t == wire.WatcherAny {
		takeAs(KindData, wire.EventDataWatchRemoved)
		takeAs(KindExist, wire.EventDataWatchRemoved)
	}
	if t == wire.WatcherPersistent || t == wire.WatcherAny {
		takeAs(KindPersistent, wire.EventPersistentWatchRemoved)
	}
	if t == wire.WatcherPersistentRecursive || t == wire.WatcherAny {
		takeAs(KindPersistentRecursive, wire.EventPersistentWatchRemoved)
	}
	return out
}

// setWatchesMax is ClientCnxn's SET_WATCHES_MAX_LENGTH: a batch of
// re-armed watches holds paths of about this many characters.
const setWatchesMax = 128 * 1024

// rearm returns the requests that re-arm every watch on a new connection
// of the same session: setWatches, or setWatches2 when a batch holds
// persistent watches, in batches of about setWatchesMax characters of
// paths, as ClientCnxn.primeConnection builds them.
func (r *registry) rearm(lastZxid int64) []*request {
	r.mu.Lock()
	var lists [KindPersistentRecursive + 1][]string
	for k := KindData; k <= KindPersistentRecursive; k++ {
		for p, ws := range r.tables[k] {
			if len(ws) > 0 {
				lists[k] = append(lists[k], p)
			}
		}
	}
	r.mu.Unlock()
	var out []*request
	for {
		var b [KindPersistentRecursive + 1][]string
		n, total := 0, 0
		for k := KindData; k <= KindPersistentRecursive && n < setWatchesMax; k++ {
			for len(lists[k]) > 0 && n < setWatchesMax {
				p := lists[k][0]
				lists[k] = lists[k][1:]
				b[k] = append(b[k], p)
				n += len(p)
				total++
			}
		}
		if total == 0 {
			return out
		}
		req := &request{xid: wire.XidSetWatches, internal: true, done: make(chan result, 1)}
		sw := wire.SetWatches{RelativeZxid: lastZxid, DataWatches: b[KindData],
			ExistWatches: b[KindExist], ChildWatches: b[KindChild]}
		if len(b[KindPersistent]) == 0 && len(b[KindPersistentRecursive]) == 0 {
			req.op = wire.OpSetWatches
			req.body = &sw
		} else {
			req.op = wire.OpSetWatches2
			req.body = &wire.SetWatches2{SetWatches: sw,
				PersistentWatches:          b[KindPersistent],
				PersistentRecursiveWatches: b[KindPersistentRecursive]}
		}
		req.state.Store(stateWritten)
		out = append(out, req)
	}
}

// sessionOnly returns the session's watches.
func (r *registry) sessionOnly() []*Watch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Watch(nil), r.session...)
}
