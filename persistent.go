package zkcoord

import (
	"context"
	"errors"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/internal/zkconn"
)

// EventRearmed tells a PersistentWatch's reader that the connection was
// lost and the watch is being set again on the same session: changes made
// in between were not delivered (ZooKeeper does not replay them for a
// persistent watch), so read again what matters. The watch is set again
// before any request issued after this event is executed, so every change
// after such a read is reported.
const EventRearmed EventType = -3

// ErrWatchRemoved ends a PersistentWatch that was removed.
var ErrWatchRemoved = errors.New("zkcoord: watch removed")

// PersistentWatch is a watch that stays set after it fires (ZooKeeper 3.6
// and later): on one node, or recursive, on a node and every node below
// it. It delivers every change the server reports, in order, without
// bound, until it is removed or its Session ends.
type PersistentWatch struct {
	s    *Session
	w    *zkconn.Watch
	path string
	typ  wire.WatcherType
	end  *Event // the last event, once the watch ended
}

// AddWatch sets a persistent watch on path, whether or not the node
// exists; recursive extends it to every node below path (which then
// reports creations, deletions and data changes, not children changes).
// It is re-armed on every reconnection of the session.
func (s *Session) AddWatch(ctx context.Context, path string, recursive bool) (*PersistentWatch, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	mode, typ := wire.AddWatchPersistent, wire.WatcherPersistent
	if recursive {
		mode, typ = wire.AddWatchPersistentRecursive, wire.WatcherPersistentRecursive
	}
	w, err := retryCall(s, ctx, func(ctx context.Context) (*zkconn.Watch, error) {
		_, w, err := s.conn.AddWatch(ctx, s.root.add(path), mode)
		return w, err
	})
	if err != nil {
		return nil, wrapPath(err, "add watch", path)
	}
	return &PersistentWatch{s: s, w: w, path: path, typ: typ}, nil
}

// Next returns the watch's next event: a change (its Path relative to the
// chroot), EventRearmed after a reconnection, or, last, EventNotWatching
// with Err saying why the watch ended (ErrWatchRemoved, or the Session's
// end). After that it returns the last event again. It waits until ctx
// ends. One goroutine at a time may call Next.
func (p *PersistentWatch) Next(ctx context.Context) (Event, error) {
	if p.end != nil {
		return *p.end, nil
	}
	for {
		e, err := p.w.Next(ctx)
		if err != nil {
			return Event{}, err
		}
		switch {
		case e.Type == wire.EventPersistentWatchRemoved:
			p.end = &Event{Type: EventNotWatching, Path: p.path, Err: ErrWatchRemoved}
			return *p.end, nil
		case e.Type != wire.EventNone:
			return Event{Type: EventType(e.Type), Path: p.s.root.strip(e.Path)}, nil
		case e.State == wire.StateSyncConnected:
			return Event{Type: EventRearmed, Path: p.path}, nil
		case e.State == wire.StateExpired, e.State == wire.StateAuthFailed, e.State == wire.StateClosed:
			p.end = &Event{Type: EventNotWatching, Path: p.path, Err: p.s.watchEnd(e.State)}
			return *p.end, nil
		}
	}
}

// Remove removes the watch from the server (removeWatches) and ends it:
// Next then reports EventNotWatching with ErrWatchRemoved. It removes every
// persistent watch of the same kind that the Session holds on the path.
// Servers before ZooKeeper 3.9 cannot remove a persistent watch alone: the
// watch then ends here at once, and the server keeps sending its
// notifications, which are dropped, until the connection is next lost or
// the Session ends.
func (p *PersistentWatch) Remove(ctx context.Context) error {
	_, err := retryCall(p.s, ctx, func(ctx context.Context) (zkconn.Reply, error) {
		return p.s.conn.RemoveWatches(ctx, p.s.root.add(p.path), p.typ)
	})
	switch {
	case errors.Is(err, wire.ErrNoWatcher):
		return nil // removed already
	case errors.Is(err, wire.ErrMarshallingError):
		// A server before 3.9 does not know this watcher type, and would
		// remove the session's other watches on the path with it.
		// The watch is forgotten here; the server drops it at the next
		// reconnection or when it fires into nothing.
		p.s.conn.Forget(p.w)
		return nil
	}
	return wrapPath(err, "remove watch", p.path)
}

// watchEnd says why the Session's watches ended, from the connection's
// last state.
func (s *Session) watchEnd(st wire.State) error {
	switch st {
	case wire.StateExpired:
		return ErrSessionExpired
	case wire.StateAuthFailed:
		return ErrAuthFailed
	}
	if err := s.Err(); err != nil {
		return err
	}
	return ErrSessionClosed
}
