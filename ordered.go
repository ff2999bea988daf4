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

// createWatch lets a caller learn that a create request has been written
// to the connection. go-zookeeper writes requests from one goroutine in the
// order they were queued, so a request queued after that moment reaches the
// server after the create, and ZooKeeper executes one session's requests in
// order: a listing queued then sees the created node, without waiting for
// the create's reply.
type createWatch struct {
	n  atomic.Int32
	mu sync.Mutex
	m  map[string]chan struct{} // request path -> closed when written
}

func (w *createWatch) waiting() bool { return w.n.Load() > 0 }

func (w *createWatch) add(path string) chan struct{} {
	ch := make(chan struct{})
	w.mu.Lock()
	if w.m == nil {
		w.m = make(map[string]chan struct{})
	}
	w.m[path] = ch
	w.mu.Unlock()
	w.n.Add(1)
	return ch
}

func (w *createWatch) remove(path string) {
	w.mu.Lock()
	if _, ok := w.m[path]; ok {
		delete(w.m, path)
		w.n.Add(-1)
	}
	w.mu.Unlock()
}

// Request opcodes that create a node, and the offset of the path in their
// frames: int32 length, int32 xid, int32 opcode, then the path as an int32
// length and bytes.
const (
	opCreate  = 1
	opCreate2 = 15
)

// written inspects one write for create requests that somebody waits on.
// A request split over several writes is not recognised; its waiter then
// falls back to waiting for the reply.
func (w *createWatch) written(p []byte) {
	for len(p) >= 16 {
		size := int(binary.BigEndian.Uint32(p))
		if size < 12 || 4+size > len(p) {
			return
		}
		frame := p[4 : 4+size]
		p = p[4+size:]
		op := int32(binary.BigEndian.Uint32(frame[4:]))
		if op != opCreate && op != opCreate2 {
			continue
		}
		n := int(int32(binary.BigEndian.Uint32(frame[8:])))
		if n < 0 || 12+n > len(frame) {
			continue
		}
		path := string(frame[12 : 12+n])
		w.mu.Lock()
		if ch, ok := w.m[path]; ok {
			close(ch)
			delete(w.m, path)
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
	sent := s.creates.add(rooted)
	defer s.creates.remove(rooted)
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
