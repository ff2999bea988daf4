package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/end"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Option configures Keep.
type Option func(*options)

type options struct {
	ttl    time.Duration
	events chan<- zkcoord.RecoveryEvent
}

// WithTTL keeps a persistent TTL node instead of an ephemeral one (see the
// package documentation). The server must allow TTL nodes.
func WithTTL(ttl time.Duration) Option { return func(o *options) { o.ttl = ttl } }

// WithRecoveryEvents sends every zkcoord.RecoveryEvent of a node kept
// with KeepConfig (session started, session ended with its cause,
// recovering, recovered) to ch; its owner is the Kept, until it has ended.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
// Keep rejects it: one Session is one ZooKeeper session.
func WithRecoveryEvents(ch chan<- zkcoord.RecoveryEvent) Option {
	return func(o *options) { o.events = ch }
}

func newOptions(path string, opts []Option) (options, error) {
	if err := recipe.ValidatePath(path); err != nil {
		return options{}, fmt.Errorf("node: %w", err)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.ttl < 0 || (o.ttl > 0 && o.ttl < 10*time.Millisecond) {
		return options{}, fmt.Errorf("node: %w: TTL %v", zkcoord.ErrInvalidConfig, o.ttl)
	}
	return o, nil
}

// Kept is a node Keep keeps. It is safe for concurrent use.
type Kept struct {
	path       string
	opts       options
	maxData    int
	supervised bool // KeepConfig: a new Session follows a lost one
	own        recipe.OwnContext

	mu       sync.Mutex
	sess     *zkcoord.Session // the node is kept on; with KeepConfig, the latest
	data     []byte
	created  int           // times the node was created
	conflict bool          // another Session's node is in the way
	cond     chan struct{} // closed and replaced on every change above
	czxid    int64         // a TTL node's: the creation zxid of the node this Kept created; 0 = none

	present bool // run's goroutine only: our node was there at the last look

	setReq   chan struct{}
	cancel   context.CancelFunc
	closing  atomic.Bool // Close was called (KeepConfig: delete the node before the Session closes)
	closeErr error       // KeepConfig: what deleting the node gave; written before ended ends
	ended    *end.End
}

// Keep creates the node at path with data (creating missing parents as
// containers) and keeps it present until Close, ctx ends or the Session
// ends. It returns once the node exists.
func Keep(ctx context.Context, sess *zkcoord.Session, path string, data []byte, opts ...Option) (*Kept, error) {
	if sess == nil {
		return nil, fmt.Errorf("node: %w", zkcoord.ErrNilSession)
	}
	o, err := newOptions(path, opts)
	if err != nil {
		return nil, err
	}
	if o.events != nil {
		return nil, fmt.Errorf("node: %w: recovery events need KeepConfig (a Session cannot be renewed)", zkcoord.ErrInvalidConfig)
	}
	k, kctx, err := newKept(path, data, o, sess.Config().MaxDataSize)
	if err != nil {
		return nil, err
	}
	k.sess = sess
	return k.start(ctx, func() error { return k.run(kctx, sess, false) })
}

// KeepConfig keeps the node at path, as Keep does, across Sessions it
// opens itself from cfg, through zkcoord.Supervise: when a Session is
// Lost or Expired, a new one is opened (with backoff) and the node kept on
// it, with the data last given (to KeepConfig or Set). An ephemeral node
// is created again by the new Session; after a partition, the old
// Session's node, which the server keeps until it expires that Session,
// is deleted first, so that no stale copy stays in the way. A TTL node
// that outlived the Session is kept on, and written with the latest data.
// It returns once the node exists; it is kept until Close, ctx ends, or an
// error a new Session cannot fix (rejected credentials, an invalid Config,
// a create the server refuses).
func KeepConfig(ctx context.Context, cfg zkcoord.Config, path string, data []byte, opts ...Option) (*Kept, error) {
	o, err := newOptions(path, opts)
	if err != nil {
		return nil, err
	}
	maxData := cfg.MaxDataSize
	if maxData == 0 {
		maxData = zkcoord.DefaultMaxDataSize
	}
	k, kctx, err := newKept(path, data, o, maxData)
	if err != nil {
		return nil, err
	}
	k.supervised = true
	return k.start(ctx, func() error { return k.supervise(kctx, cfg) })
}

func newKept(path string, data []byte, o options, maxData int) (*Kept, context.Context, error) {
	if data == nil {
		data = []byte{}
	}
	if len(data) > maxData {
		return nil, nil, fmt.Errorf("node: %w: %d bytes", zkcoord.ErrTooLarge, len(data))
	}
	kctx, cancel := context.WithCancel(context.Background())
	k := &Kept{
		path: path, opts: o, maxData: maxData, data: bytes.Clone(data),
		cond: make(chan struct{}), setReq: make(chan struct{}, 1), cancel: cancel, ended: end.New(),
	}
	return k, kctx, nil
}

// start runs keep, which keeps the node until it returns, on a goroutine
// of its own that ends the Kept with keep's error, and waits until the
// node was created once. ctx's end cancels keep.
func (k *Kept) start(ctx context.Context, keep func() error) (*Kept, error) {
	stop := context.AfterFunc(ctx, k.cancel)
	go func() {
		defer stop()
		k.ended.End(keep())
	}()
	if err := k.waitCreated(ctx); err != nil {
		k.Close(context.Background())
		return nil, err
	}
	return k, nil
}

// supervise keeps the node for KeepConfig, one Session after another.
func (k *Kept) supervise(ctx context.Context, cfg zkcoord.Config) error {
	var opts []zkcoord.SuperviseOption
	if k.opts.events != nil {
		opts = append(opts, zkcoord.WithRecoveryEvents(k.opts.events))
	}
	var prev int64 // the id of the Session before
	return zkcoord.Supervise(ctx, cfg, func(wctx context.Context, sess *zkcoord.Session) error {
		k.mu.Lock()
		k.sess = sess
		k.mu.Unlock()
		if k.opts.ttl == 0 && prev != 0 {
			k.present = false
			dropStale(wctx, sess, k.path, prev)
		}
		err := k.run(wctx, sess, prev != 0)
		prev = sess.ID()
		if k.closing.Load() && sess.Err() == nil {
			// Supervise closes the Session when work returns: delete the
			// node first, as Close does with Keep's (a TTL node would
			// otherwise stay until it expires).
			dctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
			k.closeErr = k.remove(dctx, sess)
			cancel()
		}
		return err
	}, opts...)
}

// dropStale deletes the ephemeral node at path if the Session prev still
// owns it: a Session declared Lost lives on at the server until it
// expires, and its node with it, though nobody keeps it any more. Deleted
// now, the node is created again at once, with the latest data, instead of
// after the old Session's expiry. It is best effort.
func dropStale(ctx context.Context, sess *zkcoord.Session, path string, prev int64) {
	ok, st, err := sess.Exists(ctx, path)
	if err == nil && ok && st.EphemeralOwner == prev {
		// Whatever the outcome, the keeper looks again: an error leaves
		// it waiting for the old Session's expiry.
		_ = sess.Delete(ctx, path, st.Version)
	}
}

// Path returns the node's path.
func (k *Kept) Path() string { return k.path }

// Data returns the data the node is kept with.
func (k *Kept) Data() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return bytes.Clone(k.data)
}

// Created returns how many times the node was created (1 unless someone
// deleted it, or a TTL node expired).
func (k *Kept) Created() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.created
}

// Conflict reports whether a node of another Session is in the way.
func (k *Kept) Conflict() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.conflict
}

// Set changes the data the node is kept with and writes it to the node. If
// the node at the path is not this keeper's (Conflict: another Session's
// node is in the way), Set writes nothing and returns an error wrapping
// zkcoord.ErrNotOwner; the new data is written once the keeper creates its
// own node. If the node is missing, the keeper creates it with the new
// data and Set returns nil. With KeepConfig, a Set that the end of a
// Session interrupts returns nil too: the next Session writes the data.
func (k *Kept) Set(ctx context.Context, data []byte) error {
	if len(data) > k.maxData {
		return fmt.Errorf("node: %w: %d bytes", zkcoord.ErrTooLarge, len(data))
	}
	k.mu.Lock()
	k.data = bytes.Clone(data)
	sess := k.sess
	k.mu.Unlock()
	err := k.write(ctx, sess, data)
	select {
	case k.setReq <- struct{}{}:
	default:
	}
	if err != nil && k.supervised && sess.Err() != nil {
		// The next Session writes the data: it creates the ephemeral node
		// with it, or writes the TTL node with it.
		err = nil
	}
	if err != nil {
		return fmt.Errorf("node: set %s: %w", k.path, err)
	}
	return nil
}

// ours reports whether the node with stat st is the one this keeper
// created: for an ephemeral node, it belongs to this Session; for a TTL
// node (which belongs to no session), it has the creation zxid of the node
// this keeper created.
func (k *Kept) ours(sess *zkcoord.Session, st *zkcoord.Stat) bool {
	if k.opts.ttl == 0 {
		return st.EphemeralOwner == sess.ID()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.czxid != 0 && st.Czxid == k.czxid
}

// write writes data to the node if it is ours, with the version just read,
// so that a node that changed hands in between is not written; another's
// node gives zkcoord.ErrNotOwner, a missing one nil (the keeper creates it
// with the new data). As with zkcoord.GuardedMulti, one case is not
// caught: our node deleted and another created at the same version in the
// round trip between the read and the write.
func (k *Kept) write(ctx context.Context, sess *zkcoord.Session, data []byte) error {
	return k.guarded(ctx, sess, func(version int32) error {
		_, err := sess.Set(ctx, k.path, data, version)
		return err
	})
}

// guarded reads the node and, if it is ours, runs op with the version it
// read, again if the version changed in between (ErrBadVersion).
func (k *Kept) guarded(ctx context.Context, sess *zkcoord.Session, op func(version int32) error) error {
	for {
		ok, st, err := sess.Exists(ctx, k.path)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if !k.ours(sess, st) {
			if k.opts.ttl == 0 {
				return fmt.Errorf("%w: %s belongs to session 0x%x", zkcoord.ErrNotOwner, k.path, st.EphemeralOwner)
			}
			return fmt.Errorf("%w: %s is another keeper's TTL node (created at zxid 0x%x)", zkcoord.ErrNotOwner, k.path, st.Czxid)
		}
		err = op(st.Version)
		switch {
		case errors.Is(err, zkcoord.ErrBadVersion):
			continue
		case errors.Is(err, zkcoord.ErrNoNode):
			return nil
		}
		return err
	}
}

// Done is closed when Keep stops keeping the node: Close, ctx or the
// Session ended (KeepConfig: Close, ctx, or an error a new Session cannot
// fix). Err says why.
func (k *Kept) Done() <-chan struct{} { return k.ended.Done() }

// Err returns nil while the node is kept, then why it is not.
func (k *Kept) Err() error { return k.ended.Err() }

// Close stops keeping the node and deletes it if this keeper created it.
// With KeepConfig it then closes the keeper's Session.
func (k *Kept) Close(ctx context.Context) error {
	k.closing.Store(true)
	k.cancel()
	select {
	case <-k.ended.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	var err error
	if k.supervised {
		err = k.closeErr
	} else {
		err = k.remove(ctx, k.sess)
	}
	if err != nil {
		return fmt.Errorf("node: close %s: %w", k.path, err)
	}
	return nil
}

// remove deletes the node if it is this keeper's.
func (k *Kept) remove(ctx context.Context, sess *zkcoord.Session) error {
	if sess.Err() != nil {
		return nil // an ephemeral node went with the Session; a TTL node expires
	}
	err := k.guarded(ctx, sess, func(version int32) error { return sess.Delete(ctx, k.path, version) })
	if errors.Is(err, zkcoord.ErrNotOwner) {
		return nil // not ours: another keeper's node stays
	}
	return err
}

// changed records a new state and wakes waitCreated.
func (k *Kept) changed(f func()) {
	k.mu.Lock()
	f()
	close(k.cond)
	k.cond = make(chan struct{})
	k.mu.Unlock()
}

// waitCreated waits until the node was created once, or the keeper ended.
func (k *Kept) waitCreated(ctx context.Context) error {
	for {
		k.mu.Lock()
		created, cond := k.created, k.cond
		k.mu.Unlock()
		if created > 0 {
			return nil
		}
		select {
		case <-cond:
		case <-k.ended.Done():
			return fmt.Errorf("node: keep %s: %w", k.path, k.ended.Err())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run is the one goroutine that keeps the node on sess. With rewrite (a
// Session after the first, under KeepConfig), it writes the latest data
// once the node is there, for a TTL node kept on from an earlier Session.
func (k *Kept) run(ctx context.Context, sess *zkcoord.Session, rewrite bool) error {
	var touch <-chan time.Time
	if k.opts.ttl > 0 {
		t := time.NewTicker(k.opts.ttl / 3)
		defer t.Stop()
		touch = t.C
	}
	for {
		w, err := k.ensure(ctx, sess)
		if err != nil {
			return err
		}
		if rewrite {
			rewrite = false
			if err := k.write(ctx, sess, k.Data()); err != nil && !errors.Is(err, zkcoord.ErrNotOwner) && ctx.Err() == nil {
				return fmt.Errorf("node: write %s: %w", k.path, err)
			}
		}
		select {
		case <-w:
		case <-k.setReq:
		case <-touch:
			// Only our own node: another keeper's expires if untouched.
			if err := k.write(ctx, sess, k.Data()); err != nil && !errors.Is(err, zkcoord.ErrNotOwner) && ctx.Err() == nil {
				return fmt.Errorf("node: touch %s: %w", k.path, err)
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-sess.Done():
			return sess.Err()
		}
	}
}

// ensure creates the node if it is missing and returns a watch on it.
func (k *Kept) ensure(ctx context.Context, sess *zkcoord.Session) (<-chan zkcoord.Event, error) {
	var (
		created bool   // by the create just before this look
		wrote   []byte // what that create wrote
	)
	for {
		var (
			ok   bool
			data []byte
			st   *zkcoord.Stat
			w    <-chan zkcoord.Event
			err  error
		)
		if created && k.opts.ttl > 0 {
			// The data too, in the same round trip, to tell our node.
			data, st, w, err = sess.DataW(ctx, k.path)
			ok = st != nil
		} else {
			ok, st, w, err = sess.ExistsW(ctx, k.path)
		}
		if err != nil {
			return nil, fmt.Errorf("node: watch %s: %w", k.path, err)
		}
		if ok {
			// After our TTL create, the node our create made, unless
			// someone deleted ours and another keeper created its own
			// within the round trip since. A node with other data than
			// ours, or written since, is not taken for ours (it is waited
			// out); one at version 0 with our data may still be another
			// keeper's equal node, and is taken for ours: the client
			// library does not return the create's zxid that would tell.
			if created && k.opts.ttl > 0 && st.Version == 0 && bytes.Equal(data, wrote) {
				k.mu.Lock()
				k.czxid = st.Czxid
				k.mu.Unlock()
			}
			mine := k.ours(sess, st)
			if mine && !k.present {
				k.changed(func() { k.created++ })
			}
			if k.Conflict() == mine {
				k.changed(func() { k.conflict = !mine })
			}
			k.present = mine
			return w, nil
		}
		k.present = false
		if created, wrote, err = k.create(ctx, sess); err != nil {
			return nil, err
		}
	}
}

// create creates the node once, and reports whether it did and with what
// data; a node that appeared meanwhile is fine.
func (k *Kept) create(ctx context.Context, sess *zkcoord.Session) (bool, []byte, error) {
	data := k.Data()
	var flags int32 = zkcoord.FlagEphemeral
	var err error
	if k.opts.ttl > 0 {
		flags = zkcoord.FlagPersistent
		_, err = sess.CreateTTL(ctx, k.path, data, flags, k.opts.ttl)
	} else {
		_, err = sess.Create(ctx, k.path, data, flags)
	}
	switch {
	case err == nil:
		if testHookCreated != nil {
			testHookCreated()
		}
		return true, data, nil
	case errors.Is(err, zkcoord.ErrNodeExists):
		return false, nil, nil // look again: ensure tells ours from another's
	case zkcoord.IsRetryable(err):
		if testHookOutcomeUnknown != nil {
			testHookOutcomeUnknown()
		}
		// The reply is lost. Settle syncs, so that ensure's next look
		// sees the node if the create was applied, and decides only on
		// proof: an ephemeral node of this Session is ours, and ensure
		// counts it by its owner. A TTL node belongs to no session, and
		// one holding our data may be another keeper's: it is never known
		// as ours (ensure records a TTL node's czxid only after a create
		// that returned), and is waited out until it expires, as another
		// keeper's would be. Either way ensure looks again, and an error
		// of Settle's own reads ends that look too.
		_, _ = zkcoord.Settle(ctx, sess, zkcoord.Write{Kind: zkcoord.WriteCreate, Path: k.path, Data: data, Flags: flags}, err)
		return false, nil, nil
	case errors.Is(err, zkcoord.ErrNoNode):
		if err := sess.EnsureContainers(ctx, zkcoord.Parent(k.path)); err != nil {
			return false, nil, fmt.Errorf("node: %w", err)
		}
		return false, nil, nil
	}
	return false, nil, fmt.Errorf("node: create %s: %w", k.path, err)
}

// testHookOutcomeUnknown, if set, runs when a create fails with a
// connection loss, before its outcome is settled.
var testHookOutcomeUnknown func()

// testHookCreated, if set, runs when a create returned, before the keeper
// looks at the node.
var testHookCreated func()

// Context returns a context cancelled when the Kept ends, with Err as its cause:
// do the owner's work under it.
func (k *Kept) Context() context.Context { return k.own.Get(k.Done(), k.Err) }
