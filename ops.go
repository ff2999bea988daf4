package zkcoord

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/internal/zkconn"
)

// Reads are idempotent: they are retried on connection loss until ctx ends
// or the Session ends.

// Get returns a node's data and stat.
func (s *Session) Get(ctx context.Context, path string) ([]byte, *Stat, error) {
	data, st, _, err := s.get(ctx, path, false)
	return data, st, err
}

// GetW is Get plus a one-shot watch on the node's data. The watch channel
// receives one event, then closes; it receives nothing while disconnected
// and EventNotWatching when the Session ends.
func (s *Session) GetW(ctx context.Context, path string) ([]byte, *Stat, <-chan Event, error) {
	return s.get(ctx, path, true)
}

func (s *Session) get(ctx context.Context, path string, watch bool) ([]byte, *Stat, <-chan Event, error) {
	resp, w, err := readWatched(s, ctx, "get", path, watch, s.conn.GetData)
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Data, statOf(resp.Stat), w, nil
}

// Children returns the names of a node's children, unsorted.
func (s *Session) Children(ctx context.Context, path string) ([]string, *Stat, error) {
	c, st, _, err := s.children(ctx, path, false)
	return c, st, err
}

// ChildrenW is Children plus a one-shot watch on the node's children.
func (s *Session) ChildrenW(ctx context.Context, path string) ([]string, *Stat, <-chan Event, error) {
	return s.children(ctx, path, true)
}

func (s *Session) children(ctx context.Context, path string, watch bool) ([]string, *Stat, <-chan Event, error) {
	resp, w, err := readWatched(s, ctx, "children", path, watch, s.conn.GetChildren)
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Children, statOf(resp.Stat), w, nil
}

// readWatched makes the read of the connection, what (get, children), of
// path, retried, with a watch if watch is set: the reply, and the watch's
// channel as the Session's reads return it.
func readWatched[R any](s *Session, ctx context.Context, what, path string, watch bool,
	read func(context.Context, string, bool) (R, zkconn.Reply, *zkconn.Watch, error),
) (R, <-chan Event, error) {
	var zero R
	if err := ValidatePath(path); err != nil {
		return zero, nil, err
	}
	var w *zkconn.Watch
	resp, err := retryCall(s, ctx, func(ctx context.Context) (R, error) {
		r, _, ww, err := read(ctx, s.root.add(path), watch)
		w = ww
		return r, err
	})
	if err != nil {
		return zero, nil, wrapPath(err, what, path)
	}
	return resp, s.oneShot(w), nil
}

// Exists reports whether a node exists, with its stat if it does (a zero
// Stat if it does not).
func (s *Session) Exists(ctx context.Context, path string) (bool, *Stat, error) {
	ok, st, _, err := s.exists(ctx, path, false)
	return ok, st, err
}

// ExistsW is Exists plus a one-shot watch for the node's creation, deletion
// or data change.
func (s *Session) ExistsW(ctx context.Context, path string) (bool, *Stat, <-chan Event, error) {
	return s.exists(ctx, path, true)
}

func (s *Session) exists(ctx context.Context, path string, watch bool) (bool, *Stat, <-chan Event, error) {
	if err := ValidatePath(path); err != nil {
		return false, nil, nil, err
	}
	var w *zkconn.Watch
	st, err := retryCall(s, ctx, func(ctx context.Context) (wire.Stat, error) {
		st, _, ww, err := s.conn.Exists(ctx, s.root.add(path), watch)
		w = ww
		if errors.Is(err, wire.ErrNoNode) {
			return st, errMissing
		}
		return st, err
	})
	switch {
	case err == errMissing:
		return false, &Stat{}, s.oneShot(w), nil
	case err != nil:
		return false, nil, nil, wrapPath(err, "exists", path)
	}
	return true, statOf(st), s.oneShot(w), nil
}

// errMissing is exists' answer for a node that is not there.
var errMissing = errors.New("zkcoord: no node")

// oneShot turns a watch of the connection into the channel the Session's
// reads return: it receives the watch's one event (the chroot removed from
// its path), or EventNotWatching when the Session ends, then closes. The
// connection's own news (disconnected, connected again) is the Session's
// state, not the watch's. A nil watch gives a nil channel.
func (s *Session) oneShot(w *zkconn.Watch) <-chan Event {
	if w == nil {
		return nil
	}
	ch := make(chan Event, 1)
	fired := false
	w.Notify(func(e zkconn.Event) { // on the connection's dispatcher: never blocks
		if fired {
			return
		}
		var out Event
		switch {
		case e.Type != wire.EventNone:
			out = Event{Type: EventType(e.Type), Path: s.root.strip(e.Path)}
		case e.State == wire.StateExpired, e.State == wire.StateAuthFailed, e.State == wire.StateClosed:
			out = Event{Type: EventNotWatching, Err: s.watchEnd(e.State)}
		default:
			return
		}
		fired = true
		ch <- out
		close(ch)
	})
	return ch
}

// DataW is GetW for a node that may not exist yet: when it does not, DataW
// returns nil data and a nil Stat with a watch that fires when the node is
// created. A node deleted between the two reads is read again.
func (s *Session) DataW(ctx context.Context, path string) ([]byte, *Stat, <-chan Event, error) {
	for {
		data, st, w, err := s.GetW(ctx, path)
		if !errors.Is(err, ErrNoNode) {
			return data, st, w, err
		}
		ok, _, w, err := s.ExistsW(ctx, path)
		if err != nil || !ok {
			return nil, nil, w, err
		}
	}
}

// Sync makes the connected server catch up with the leader for path, so that
// the next read is at least as new as every write before the Sync.
func (s *Session) Sync(ctx context.Context, path string) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	_, err := retryCall(s, ctx, func(ctx context.Context) (zkconn.Reply, error) {
		return s.conn.Sync(ctx, s.root.add(path))
	})
	return wrapPath(err, "sync", path)
}

// Writes are sent once: after a connection loss their outcome is unknown and
// the caller decides (see Retry, CreateProtected and the fencing helpers).

// Create creates a node with the Session's ACL and returns its path (which
// differs from path for sequential nodes).
func (s *Session) Create(ctx context.Context, path string, data []byte, flags int32) (string, error) {
	if err := s.checkCreate(path, data, flags); err != nil {
		return "", err
	}
	created, _, err := s.create(ctx, path, data, flags)
	return created, wrapPath(err, "create", path)
}

// CreateWithStat is Create that also returns the new node's Stat, from the
// same reply: its Czxid is the node's fencing token, read back without a
// second round trip.
func (s *Session) CreateWithStat(ctx context.Context, path string, data []byte, flags int32) (string, *Stat, error) {
	if err := s.checkCreate(path, data, flags); err != nil {
		return "", nil, err
	}
	created, st, err := s.create(ctx, path, data, flags)
	return created, st, wrapPath(err, "create", path)
}

// create sends one create, the path and data checked.
func (s *Session) create(ctx context.Context, path string, data []byte, flags int32) (string, *Stat, error) {
	resp, err := call(s, ctx, func(ctx context.Context) (wire.Create2Response, error) {
		r, _, err := s.conn.Create(ctx, s.root.add(path), data, s.aclFor(path), wire.CreateMode(flags))
		return r, err
	})
	if err != nil {
		return "", nil, err
	}
	return s.root.strip(resp.Path), statOf(resp.Stat), nil
}

func (s *Session) checkCreate(path string, data []byte, flags int32) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	if path == "/" {
		return fmt.Errorf("%w: cannot create /", ErrInvalidPath)
	}
	if flags&^FlagEphemeralSequential != 0 {
		return fmt.Errorf("zkcoord: create %s: unsupported flags %d", path, flags)
	}
	return s.checkSize(path, data)
}

func (s *Session) checkSize(path string, data []byte) error {
	if len(data) > s.cfg.MaxDataSize {
		return fmt.Errorf("%w: %d bytes for %s, limit %d", ErrTooLarge, len(data), path, s.cfg.MaxDataSize)
	}
	return nil
}

// Set writes a node's data if its version matches (-1 matches any).
func (s *Session) Set(ctx context.Context, path string, data []byte, version int32) (*Stat, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if err := s.checkSize(path, data); err != nil {
		return nil, err
	}
	st, err := call(s, ctx, func(ctx context.Context) (wire.Stat, error) {
		st, _, err := s.conn.SetData(ctx, s.root.add(path), data, version)
		return st, err
	})
	if err != nil {
		return nil, wrapPath(err, "set", path)
	}
	return statOf(st), nil
}

// Delete deletes a node if its version matches (-1 matches any).
func (s *Session) Delete(ctx context.Context, path string, version int32) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	_, err := call(s, ctx, func(ctx context.Context) (zkconn.Reply, error) {
		return s.conn.Delete(ctx, s.root.add(path), version)
	})
	return wrapPath(err, "delete", path)
}

// Op is one operation of a transaction (Multi, GuardedMulti). Build it with
// CreateOp, SetOp, DeleteOp or CheckOp, or take a fence's Check; the zero Op
// is refused. Paths are relative to the chroot.
type Op struct {
	op wire.MultiOp
}

// Multi runs operations atomically. Paths in the responses are relative to
// the chroot. If the transaction fails, the error is the failed
// operation's, and the responses say which one it was.
func (s *Session) Multi(ctx context.Context, ops ...Op) ([]MultiResponse, error) {
	return s.MultiThen(ctx, ops)
}

// MultiThen runs the transaction ops like Multi and, as soon as it is
// issued, each of then on a goroutine of its own, to send reads: the
// connection writes requests in the order they were issued and ZooKeeper
// executes them in that order, so the reads see what the transaction
// wrote (or, if it failed, what stood before it), and transaction and
// reads together usually take one round trip. MultiThen returns when the
// transaction and every function of then have returned; those get ctx,
// and learn the transaction's outcome only from what MultiThen returns. A
// watch a read sets stays set whatever the outcome.
func (s *Session) MultiThen(ctx context.Context, ops []Op, then ...func(ctx context.Context)) ([]MultiResponse, error) {
	rooted, err := s.rootOps(ops)
	if err != nil {
		return nil, err
	}
	if err := s.alive(); err != nil {
		return nil, fmt.Errorf("zkcoord: multi: %w", err)
	}
	var resp wire.MultiResponse
	pending := s.conn.Start(ctx, wire.OpMulti, &wire.MultiRequest{Ops: rooted}, &resp)
	var wg sync.WaitGroup
	for _, f := range then {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx)
		}()
	}
	_, err = pending.Wait()
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("zkcoord: multi: %w", s.callErr(err))
	}
	res := make([]MultiResponse, len(resp.Results))
	for i, r := range resp.Results {
		switch r.Type {
		case wire.OpError:
			res[i].Error = r.Err.Err()
			if err == nil && r.Err != wire.OK && r.Err != wire.ErrRuntimeInconsistency {
				err = r.Err
			}
		case wire.OpCreate, wire.OpCreate2:
			res[i].String = s.root.strip(r.Path)
		case wire.OpSetData:
			res[i].Stat = statOf(r.Stat)
		}
	}
	if err != nil {
		return res, fmt.Errorf("zkcoord: multi: %w", err)
	}
	return res, nil
}

// rootOps validates ops and returns them as the wire sends them, under the
// Session's root.
func (s *Session) rootOps(ops []Op) ([]wire.MultiOp, error) {
	rooted := make([]wire.MultiOp, len(ops))
	for i, op := range ops {
		o := op.op
		switch o.Type {
		case wire.OpCreate:
			if err := s.checkCreate(o.Path, o.Data, int32(o.Flags)); err != nil {
				return nil, err
			}
			o.ACL = s.aclFor(o.Path)
		case wire.OpSetData:
			if err := s.checkSize(o.Path, o.Data); err != nil {
				return nil, err
			}
		case wire.OpDelete, wire.OpCheck:
		default:
			return nil, fmt.Errorf("zkcoord: multi: operation %d is empty; build it with CreateOp, SetOp, DeleteOp or CheckOp", i)
		}
		if err := ValidatePath(o.Path); err != nil {
			return nil, err
		}
		o.Path = s.root.add(o.Path)
		rooted[i] = o
	}
	return rooted, nil
}

// CreateOp builds a create operation for Multi (with the Session's ACL).
func CreateOp(path string, data []byte, flags int32) Op {
	return Op{wire.MultiOp{Type: wire.OpCreate, Path: path, Data: data, Flags: wire.CreateMode(flags)}}
}

// SetOp builds a set-data operation for Multi.
func SetOp(path string, data []byte, version int32) Op {
	return Op{wire.MultiOp{Type: wire.OpSetData, Path: path, Data: data, Version: version}}
}

// DeleteOp builds a delete operation for Multi.
func DeleteOp(path string, version int32) Op {
	return Op{wire.MultiOp{Type: wire.OpDelete, Path: path, Version: version}}
}

// CheckOp builds a version check for Multi (-1: the node must exist).
func CheckOp(path string, version int32) Op {
	return Op{wire.MultiOp{Type: wire.OpCheck, Path: path, Version: version}}
}

func wrapPath(err error, op, path string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("zkcoord: %s %s: %w", op, path, err)
}
