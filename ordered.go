package zkcoord

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// writeWatch lets a caller learn that a request has been written to the
// connection. go-zookeeper writes requests from one goroutine in the order
// they were queued, so a request queued after that moment reaches the
// server after the first one, and ZooKeeper executes one session's
// requests in order: a listing queued then sees a created node, and a read
// queued then sees what a transaction wrote, without waiting for the
// reply. Creates are known by their path, transactions by the path of
// their first operation.
type writeWatch struct {
	n  atomic.Int32
	mu sync.Mutex
	m  map[writeKey]chan struct{} // closed when the request is written
}

// writeKey names a request someone waits on: its kind and its path (for a
// transaction, its first operation's path).
type writeKey struct {
	multi bool
	path  string
}

func (w *writeWatch) waiting() bool { return w.n.Load() > 0 }

// add registers a wait for the request k and returns the channel closed
// when it is written. If someone waits on the same key already, the
// returned channel is never closed: the caller falls back to the reply.
func (w *writeWatch) add(k writeKey) chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = make(map[writeKey]chan struct{})
	}
	if _, taken := w.m[k]; taken {
		return ch
	}
	w.m[k] = ch
	w.n.Add(1)
	return ch
}

// remove ends the wait that add returned ch for.
func (w *writeWatch) remove(k writeKey, ch chan struct{}) {
	w.mu.Lock()
	if w.m[k] == ch {
		delete(w.m, k)
		w.n.Add(-1)
	}
	w.mu.Unlock()
}

// Request opcodes recognised, and where their paths start in a frame
// (after the int32 length): int32 xid and int32 opcode, then for a create
// the path (int32 length and bytes); for a transaction first a header of
// the first operation (int32 type, one byte done, int32 error), then that
// operation's path.
const (
	opCreate  = 1
	opMulti   = 14
	opCreate2 = 15

	createPathAt = 8
	multiPathAt  = 8 + 4 + 1 + 4
)

// written inspects one write for requests that somebody waits on. A
// request split over several writes is not recognised; its waiter then
// falls back to waiting for the reply.
func (w *writeWatch) written(p []byte) {
	for len(p) >= 16 {
		size := int(binary.BigEndian.Uint32(p))
		if size < 12 || 4+size > len(p) {
			return
		}
		frame := p[4 : 4+size]
		p = p[4+size:]
		var k writeKey
		at := createPathAt
		switch int32(binary.BigEndian.Uint32(frame[4:])) {
		case opCreate, opCreate2:
		case opMulti:
			k.multi, at = true, multiPathAt
		default:
			continue
		}
		if at+4 > len(frame) {
			continue
		}
		n := int(int32(binary.BigEndian.Uint32(frame[at:])))
		if n < 0 || at+4+n > len(frame) {
			continue
		}
		k.path = string(frame[at+4 : at+4+n])
		w.mu.Lock()
		if ch, ok := w.m[k]; ok {
			close(ch)
			delete(w.m, k)
			w.n.Add(-1)
		}
		w.mu.Unlock()
	}
}

// CreateProtectedAndList is CreateProtected followed by a listing of
// parent's children that is certain to include the new node. The listing
// is sent right behind the create, so both usually take a single round
// trip: this is how a lock contender learns its place at the cost of one
// request. Children are returned unsorted.
func (s *Session) CreateProtectedAndList(ctx context.Context, parent, name string, data []byte, flags int32) (string, []string, error) {
	if err := ValidateName(name); err != nil {
		return "", nil, err
	}
	prefix := ProtectedPrefix + newUUID() + "-"
	path := Join(parent, prefix+name)
	if err := s.checkCreate(path, data, flags); err != nil {
		return "", nil, err
	}
	node, kids, err := s.createThenList(ctx, path, data, flags, parent, prefix)
	switch {
	case err == nil && kids != nil:
		return node, kids, nil
	case err == nil: // created, but the listing has to be taken again
	case errors.Is(err, errAmbiguous), errors.Is(err, zk.ErrNoNode):
		// A lost reply, or a missing parent: the careful path, which finds
		// a node that was created after all.
		node, err = s.createProtected(ctx, parent, prefix, path, data, flags, errors.Is(err, errAmbiguous))
		if err != nil {
			return "", nil, err
		}
	default:
		return "", nil, err
	}
	kids, _, err = s.Children(ctx, parent)
	if err != nil {
		return node, nil, err
	}
	return node, kids, nil
}

// errAmbiguous: a create's reply was lost with its connection.
var errAmbiguous = errors.New("zkcoord: create outcome unknown")

// createThenList sends the create and, as soon as it is written, the
// listing. It returns the node and the listing; a nil listing with a nil
// error means the node exists but the listing must be taken again.
func (s *Session) createThenList(ctx context.Context, path string, data []byte, flags int32, parent, prefix string) (string, []string, error) {
	if err := s.alive(); err != nil {
		return "", nil, err
	}
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	rooted := s.root.add(path)
	key := writeKey{path: rooted}
	sent := s.written.add(key)
	defer s.written.remove(key, sent)
	type created struct {
		path string
		err  error
	}
	res := make(chan created, 1)
	if !s.spawn(func() {
		p, err := s.conn.Create(rooted, data, flags, s.cfg.ACL)
		res <- created{s.root.strip(p), err}
	}) {
		return "", nil, s.Err()
	}
	pending := func() (string, error) { r := <-res; return r.path, r.err }
	type listed struct {
		kids []string
		err  error
	}
	var list chan listed
	var c created
	select {
	case <-sent:
		list = make(chan listed, 1)
		if !s.spawn(func() {
			kids, _, err := s.conn.Children(s.root.add(parent))
			list <- listed{kids, err}
		}) {
			list <- listed{nil, s.Err()}
		}
		select {
		case c = <-res:
		case <-ctx.Done():
			s.abandon(parent, prefix, pending)
			return "", nil, wrapPath(ctx.Err(), "create", path)
		}
	case c = <-res:
	case <-ctx.Done():
		s.abandon(parent, prefix, pending)
		return "", nil, wrapPath(ctx.Err(), "create", path)
	}
	switch {
	case c.err != nil && s.alive() != nil:
		return "", nil, s.Err()
	case IsRetryable(c.err):
		return "", nil, errAmbiguous
	case c.err != nil:
		return "", nil, wrapPath(c.err, "create", path)
	case list == nil:
		return c.path, nil, nil
	}
	l := <-list
	if l.err != nil || !slices.Contains(l.kids, Base(c.path)) {
		return c.path, nil, nil
	}
	return c.path, l.kids, nil
}
