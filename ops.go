package zkcoord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
)

// Types re-exported from go-zookeeper so that callers rarely need it.
type (
	Stat          = zk.Stat
	Event         = zk.Event
	ACL           = zk.ACL
	MultiResponse = zk.MultiResponse
)

// Create flags.
const (
	FlagPersistent          int32 = 0
	FlagEphemeral                 = zk.FlagEphemeral
	FlagSequence                  = zk.FlagSequence
	FlagEphemeralSequential       = zk.FlagEphemeralSequential
)

// Watch event types.
const (
	EventNodeCreated         = zk.EventNodeCreated
	EventNodeDeleted         = zk.EventNodeDeleted
	EventNodeDataChanged     = zk.EventNodeDataChanged
	EventNodeChildrenChanged = zk.EventNodeChildrenChanged
	EventNotWatching         = zk.EventNotWatching
)

// Reads are idempotent: they are retried on connection loss until ctx ends
// or the Session ends.

// Get returns a node's data and stat.
func (s *Session) Get(ctx context.Context, path string) ([]byte, *Stat, error) {
	if err := ValidatePath(path); err != nil {
		return nil, nil, err
	}
	r, err := retryCall(s, ctx, func() (got, error) {
		d, st, err := s.conn.Get(s.root.add(path))
		return got{data: d, stat: st}, err
	})
	return r.data, r.stat, wrapPath(err, "get", path)
}

// GetW is Get plus a one-shot watch on the node's data. The watch channel
// receives one event, then closes; it receives nothing while disconnected
// and EventNotWatching when the Session ends.
func (s *Session) GetW(ctx context.Context, path string) ([]byte, *Stat, <-chan Event, error) {
	if err := ValidatePath(path); err != nil {
		return nil, nil, nil, err
	}
	r, err := retryCall(s, ctx, func() (got, error) {
		d, st, ch, err := s.conn.GetW(s.root.add(path))
		return got{data: d, stat: st, w: ch}, err
	})
	if err != nil {
		return nil, nil, nil, wrapPath(err, "get", path)
	}
	return r.data, r.stat, s.strip(r.w), nil
}

// Children returns the names of a node's children, unsorted.
func (s *Session) Children(ctx context.Context, path string) ([]string, *Stat, error) {
	if err := ValidatePath(path); err != nil {
		return nil, nil, err
	}
	r, err := retryCall(s, ctx, func() (got, error) {
		c, st, err := s.conn.Children(s.root.add(path))
		return got{children: c, stat: st}, err
	})
	return r.children, r.stat, wrapPath(err, "children", path)
}

// ChildrenW is Children plus a one-shot watch on the node's children.
func (s *Session) ChildrenW(ctx context.Context, path string) ([]string, *Stat, <-chan Event, error) {
	if err := ValidatePath(path); err != nil {
		return nil, nil, nil, err
	}
	r, err := retryCall(s, ctx, func() (got, error) {
		c, st, ch, err := s.conn.ChildrenW(s.root.add(path))
		return got{children: c, stat: st, w: ch}, err
	})
	if err != nil {
		return nil, nil, nil, wrapPath(err, "children", path)
	}
	return r.children, r.stat, s.strip(r.w), nil
}

// Exists reports whether a node exists, with its stat if it does.
func (s *Session) Exists(ctx context.Context, path string) (bool, *Stat, error) {
	if err := ValidatePath(path); err != nil {
		return false, nil, err
	}
	r, err := retryCall(s, ctx, func() (got, error) {
		e, st, err := s.conn.Exists(s.root.add(path))
		return got{ok: e, stat: st}, err
	})
	return r.ok, r.stat, wrapPath(err, "exists", path)
}

// ExistsW is Exists plus a one-shot watch for the node's creation, deletion
// or data change.
func (s *Session) ExistsW(ctx context.Context, path string) (bool, *Stat, <-chan Event, error) {
	if err := ValidatePath(path); err != nil {
		return false, nil, nil, err
	}
	r, err := retryCall(s, ctx, func() (got, error) {
		e, st, ch, err := s.conn.ExistsW(s.root.add(path))
		return got{ok: e, stat: st, w: ch}, err
	})
	if err != nil {
		return false, nil, nil, wrapPath(err, "exists", path)
	}
	return r.ok, r.stat, s.strip(r.w), nil
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
	_, err := retryCall(s, ctx, none(func() error {
		_, err := s.conn.Sync(s.root.add(path))
		return err
	}))
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
	created, err := call(s, ctx, func() (string, error) {
		return s.conn.Create(s.root.add(path), data, flags, s.cfg.ACL)
	})
	if err != nil {
		return "", wrapPath(err, "create", path)
	}
	return s.root.strip(created), nil
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
	stat, err := call(s, ctx, func() (*Stat, error) {
		return s.conn.Set(s.root.add(path), data, version)
	})
	return stat, wrapPath(err, "set", path)
}

// Delete deletes a node if its version matches (-1 matches any).
func (s *Session) Delete(ctx context.Context, path string, version int32) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	_, err := call(s, ctx, none(func() error { return s.conn.Delete(s.root.add(path), version) }))
	return wrapPath(err, "delete", path)
}

// Write describes a write for Settle: what it did, to which node, and what
// its sender knew of that node.
type Write struct {
	// Kind is WriteCreate, WriteSet or WriteDelete.
	Kind WriteKind
	Path string
	// Data is what a create or set wrote.
	Data []byte
	// Flags are a create's flags.
	Flags int32
	// Version is the version a set or delete expected (-1: any).
	Version int32
	// Czxid is the czxid of the node a set or delete meant, 0 if not
	// known. Given, it tells that node from one deleted and created again
	// at the same path, which a version alone cannot.
	Czxid int64
	// Sole says that only this Session can move the node from Version to
	// the next version (for example because an ephemeral node of the
	// Session guards the write): then a node one version on holding Data
	// is this write's doing.
	Sole bool
}

// WriteKind is the kind of a Write.
type WriteKind int

// Kinds of Write.
const (
	WriteCreate WriteKind = iota + 1
	WriteSet
	WriteDelete
)

// Settled is what Settle found: the write surely happened (Done) or surely
// did not, and the node as read afterwards (Stat nil: there is none; never
// for a set, which Settle calls unknown when its node is gone).
type Settled struct {
	Done bool
	Data []byte
	Stat *Stat
}

// Settle finds out whether w, a write that failed with err, happened.
//
// After a connection loss (IsRetryable(err)) Settle makes the server catch
// up with the leader (Sync), so that the read it takes next sees the write
// if it was applied (a request cut off by a reconnection is either applied
// before the Sync completes or never), reads the node, and decides from
// what is there only when that is exact:
//
//   - create: no node means not done; so does a node that is someone
//     else's: an ephemeral node of another Session, or a node holding
//     other data at version 0. An ephemeral node of this Session means
//     done. (A create cannot name the node it meant: a delete racing the
//     create can hide that it happened.)
//   - set at a version: the node still at Version, or one version on with
//     other data than Data, means not done; one version on with Data and
//     Sole means done.
//   - delete: no node, or a node with another czxid than Czxid, means the
//     node meant is gone (done); the node meant still there means not done.
//
// Anything else fails with an error wrapping ErrOutcomeUnknown: in
// particular a node one version on holding exactly the data written,
// without Sole, since another writer may have written the same bytes from
// the same version, and a node at a later version, or gone, or created
// again (Czxid). Equal data never proves that a write was this one's.
//
// A write whose ctx or Session ended while it was in flight fails at once
// with an error wrapping ErrOutcomeUnknown and the cause: nothing can be
// read then, and the request may still be applied. Any other err is
// returned as it is: the write surely failed. An error of Settle's own
// reads (its ctx ended, the Session ended) is returned wrapping
// ErrOutcomeUnknown too. An ErrOutcomeUnknown is never retryable.
func (s *Session) Settle(ctx context.Context, w Write, err error) (Settled, error) {
	what := fmt.Sprintf("%s %s", w.Kind, w.Path)
	switch {
	case err == nil:
		return Settled{Done: true}, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrSessionLost), errors.Is(err, ErrSessionExpired), errors.Is(err, ErrSessionClosed):
		return Settled{}, fmt.Errorf("%w: %s: %w", ErrOutcomeUnknown, what, err)
	case !IsRetryable(err):
		return Settled{}, err
	}
	if serr := s.Sync(ctx, w.Path); serr != nil && !errors.Is(serr, zk.ErrNoNode) {
		return Settled{}, fmt.Errorf("%w: %s: reply lost (%v), then: %w", ErrOutcomeUnknown, what, err, serr)
	}
	data, st, gerr := s.Get(ctx, w.Path)
	if gerr != nil && !errors.Is(gerr, zk.ErrNoNode) {
		return Settled{}, fmt.Errorf("%w: %s: reply lost (%v), then: %w", ErrOutcomeUnknown, what, err, gerr)
	}
	if gerr != nil {
		data, st = nil, nil
	}
	found := Settled{Data: data, Stat: st}
	done, why := settle(w, data, st, s.ID())
	switch done {
	case verdictDone:
		found.Done = true
		return found, nil
	case verdictNotDone:
		return found, nil
	}
	return found, fmt.Errorf("%w: %s: reply lost (%v) and %s", ErrOutcomeUnknown, what, err, why)
}

// verdict is settle's decision.
type verdict int

const (
	verdictUnknown verdict = iota
	verdictDone
	verdictNotDone
)

// settle decides a lost write's outcome from the node found afterwards
// (st nil: none), by the rules of Settle; why says what left it unknown.
func settle(w Write, data []byte, st *Stat, self int64) (verdict, string) {
	switch w.Kind {
	case WriteCreate:
		switch {
		case st == nil:
			return verdictNotDone, ""
		case w.Flags&FlagEphemeral != 0 && st.EphemeralOwner == self:
			return verdictDone, ""
		case w.Flags&FlagEphemeral != 0:
			return verdictNotDone, ""
		case st.Version == 0 && !bytes.Equal(data, w.Data):
			return verdictNotDone, ""
		case st.Version == 0:
			return verdictUnknown, "the node holds what the create wrote, which another create may have written too"
		}
		return verdictUnknown, fmt.Sprintf("the node is at version %d", st.Version)
	case WriteSet:
		switch {
		case w.Version < 0:
			return verdictUnknown, "the set was at any version"
		case st == nil:
			return verdictUnknown, "the node is gone"
		case w.Czxid != 0 && st.Czxid != w.Czxid:
			return verdictUnknown, "the node was deleted and created again"
		case st.Version <= w.Version:
			return verdictNotDone, ""
		case st.Version == w.Version+1 && !bytes.Equal(data, w.Data):
			return verdictNotDone, ""
		case st.Version == w.Version+1 && w.Sole:
			return verdictDone, ""
		case st.Version == w.Version+1:
			return verdictUnknown, fmt.Sprintf("version %d holds what the set wrote, which another writer may have written too", st.Version)
		}
		return verdictUnknown, fmt.Sprintf("the node is at version %d", st.Version)
	case WriteDelete:
		switch {
		case st == nil, w.Czxid != 0 && st.Czxid != w.Czxid:
			return verdictDone, ""
		}
		return verdictNotDone, ""
	}
	return verdictUnknown, "the kind of write is unknown"
}

func (k WriteKind) String() string {
	switch k {
	case WriteCreate:
		return "create"
	case WriteSet:
		return "set"
	case WriteDelete:
		return "delete"
	}
	return fmt.Sprintf("write(%d)", int(k))
}

// Op is one operation of a transaction (Multi, GuardedMulti). Build it with
// CreateOp, SetOp, DeleteOp or CheckOp, or take a fence's Check; the zero Op
// is refused. Paths are relative to the chroot.
type Op struct {
	req any // *zk.CreateRequest, *zk.SetDataRequest, *zk.DeleteRequest or *zk.CheckVersionRequest
}

// Multi runs operations atomically. Paths in the responses are relative to
// the chroot.
func (s *Session) Multi(ctx context.Context, ops ...Op) ([]MultiResponse, error) {
	return s.MultiThen(ctx, ops)
}

// MultiThen runs the transaction ops like Multi and, as soon as it is
// written to the connection, each of then on a goroutine of its own, to
// send reads: ZooKeeper executes them after the transaction, so they see
// what it wrote (or, if it failed, what stood before it), and transaction
// and reads together usually take one round trip. If the moment of writing
// cannot be observed, the reads start once the transaction's reply is in.
// MultiThen returns when the transaction and every function of then have
// returned; those get ctx, and learn the transaction's outcome only from
// what MultiThen returns. A watch a read sets stays set whatever the
// outcome.
func (s *Session) MultiThen(ctx context.Context, ops []Op, then ...func(ctx context.Context)) ([]MultiResponse, error) {
	rooted, first, err := s.rootOps(ops)
	if err != nil {
		return nil, err
	}
	if len(then) == 0 {
		return s.multi(ctx, rooted)
	}
	key := writeKey{multi: true, path: first}
	sent := s.written.add(key)
	defer s.written.remove(key, sent)
	finished, readsDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(readsDone)
		select {
		case <-sent:
		case <-finished:
		}
		var wg sync.WaitGroup
		wg.Add(len(then))
		for _, f := range then {
			go func() {
				defer wg.Done()
				f(ctx)
			}()
		}
		wg.Wait()
	}()
	res, err := s.multi(ctx, rooted)
	close(finished)
	<-readsDone
	return res, err
}

// rootOps validates ops and returns them as go-zookeeper takes them, under
// the Session's root, with the first operation's rooted path.
func (s *Session) rootOps(ops []Op) ([]any, string, error) {
	rooted := make([]any, len(ops))
	first := ""
	for i, op := range ops {
		var path string
		switch o := op.req.(type) {
		case *zk.CreateRequest:
			if err := s.checkCreate(o.Path, o.Data, o.Flags); err != nil {
				return nil, "", err
			}
			c := *o
			c.Path = s.root.add(o.Path)
			if c.Acl == nil {
				c.Acl = s.cfg.ACL
			}
			rooted[i] = &c
			if i == 0 {
				first = c.Path
			}
			continue
		case *zk.SetDataRequest:
			if err := s.checkSize(o.Path, o.Data); err != nil {
				return nil, "", err
			}
			c := *o
			path, c.Path = o.Path, s.root.add(o.Path)
			rooted[i] = &c
		case *zk.DeleteRequest:
			c := *o
			path, c.Path = o.Path, s.root.add(o.Path)
			rooted[i] = &c
		case *zk.CheckVersionRequest:
			c := *o
			path, c.Path = o.Path, s.root.add(o.Path)
			rooted[i] = &c
		default:
			return nil, "", fmt.Errorf("zkcoord: multi: operation %d is empty; build it with CreateOp, SetOp, DeleteOp or CheckOp", i)
		}
		if err := ValidatePath(path); err != nil {
			return nil, "", err
		}
		if i == 0 {
			first = s.root.add(path)
		}
	}
	return rooted, first, nil
}

// multi sends a rooted transaction.
func (s *Session) multi(ctx context.Context, rooted []any) ([]MultiResponse, error) {
	res, err := call(s, ctx, func() ([]MultiResponse, error) {
		return s.conn.Multi(rooted...)
	})
	for i := range res {
		if res[i].String != "" {
			res[i].String = s.root.strip(res[i].String)
		}
	}
	if err != nil {
		return res, fmt.Errorf("zkcoord: multi: %w", err)
	}
	return res, nil
}

// CreateOp builds a create operation for Multi (with the Session's ACL).
func CreateOp(path string, data []byte, flags int32) Op {
	return Op{&zk.CreateRequest{Path: path, Data: data, Flags: flags}}
}

// SetOp builds a set-data operation for Multi.
func SetOp(path string, data []byte, version int32) Op {
	return Op{&zk.SetDataRequest{Path: path, Data: data, Version: version}}
}

// DeleteOp builds a delete operation for Multi.
func DeleteOp(path string, version int32) Op {
	return Op{&zk.DeleteRequest{Path: path, Version: version}}
}

// CheckOp builds a version check for Multi (-1: the node must exist).
func CheckOp(path string, version int32) Op {
	return Op{&zk.CheckVersionRequest{Path: path, Version: version}}
}

// got carries a read's results out of call.
type got struct {
	data     []byte
	children []string
	ok       bool
	stat     *Stat
	w        <-chan zk.Event
}

// strip forwards a watch channel with the chroot removed from event paths.
func (s *Session) strip(w <-chan zk.Event) <-chan zk.Event {
	if s.root == "" || w == nil {
		return w
	}
	out := make(chan zk.Event, 1)
	// The goroutine ends when go-zookeeper fires or invalidates the watch,
	// which it does for every watch when the Session ends.
	if !s.spawn(func() {
		defer close(out)
		if ev, ok := <-w; ok {
			ev.Path = s.root.strip(ev.Path)
			out <- ev
		}
	}) {
		close(out)
	}
	return out
}

func wrapPath(err error, op, path string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("zkcoord: %s %s: %w", op, path, err)
}
