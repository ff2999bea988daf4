package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/lockdelay"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Errors returned by this package; check them with errors.Is.
var (
	// ErrLost is wrapped by Lease.Err, and by Release, when a lease ended
	// without being released: its Session ended (the error then also wraps
	// zkcoord.ErrSessionLost, ErrSessionExpired or ErrSessionClosed) or its
	// node was deleted by someone else (ErrNodeDeleted).
	ErrLost = errors.New("lock: lost")
	// ErrNodeDeleted: the lease's node, or a waiting contender's node, was
	// deleted by another client.
	ErrNodeDeleted = errors.New("lock: node deleted by another client")
	// ErrReleased is what Lease.Err reports after a successful Release.
	ErrReleased = errors.New("lock: released")
	// ErrLocked: TryLock or TryRLock found the lock held by another client.
	ErrLocked = errors.New("lock: held by another client")
	// ErrNoLease: TryAcquire found no free lease, or found another
	// acquirer holding the semaphore's mutex and did not wait for it.
	ErrNoLease = errors.New("lock: no free lease")
	// ErrBadCount: AcquireN or TryAcquireN asked for fewer than one lease,
	// or for more than the semaphore has.
	ErrBadCount = errors.New("lock: number of leases out of range")
	// ErrNotHeld: Unlock or RUnlock on a value that holds no such lock.
	ErrNotHeld = errors.New("lock: not held")
	// ErrAlreadyHeld: Lock (or RLock) on a value that already holds, or is
	// acquiring, a lock. Locks are not re-entrant.
	ErrAlreadyHeld = errors.New("lock: already held or being acquired through this value (locks are not re-entrant)")
	// ErrOtherKind: the lock's path holds contenders of another kind of
	// lock (a Mutex, an RWMutex or a Semaphore, in any library), whose
	// nodes this kind would not see, so that the two would not exclude
	// each other. The error names both kinds and the other's node.
	ErrOtherKind = errors.New("lock: another kind of lock uses this path")
)

// A Lease is the ownership of one lock node: a held Mutex, a held read or
// write side of an RWMutex, or one lease of a Semaphore.
//
// Done closes when the lease ends, for whatever reason; Err then tells why.
// A write lease that RWMutex.Downgrade turned into a read lease ends as
// released.
// A lease is lost, without anyone releasing it, when its Session ends
// (Lost, Expired or Closed) or when another client deletes its node. The
// Session declares itself Lost before the server can expire it, so a holder
// that stops work when Done closes has stopped before anyone else can
// acquire the lock, unless the server ends the session on purpose or the
// process pauses for longer than the session timeout (GC, VM migration):
// then the next holder may acquire first. Resources that must never see
// two holders should check Token, or be written through zkcoord's guarded
// writes with Fence.
//
// A lease reads its node's stat (for Token and Fence) and watches the node
// (for a deletion by someone else) from the first call of Done, Err, Token
// or Fence on, or from its acquisition if it had to wait for the lock: a
// holder that asks none of them costs no request beyond the create, the
// listing and the delete. The end of its Session is noticed either way.
//
// A Lease is safe for concurrent use.
type Lease struct {
	sess *zkcoord.Session
	path string
	mark bool // release with the lock-delay's mark

	statReady chan struct{} // closed once token and version are set, or cannot be
	token     int64
	version   int32

	done     chan struct{} // closed when the lease ends
	finished chan struct{} // closed when run has returned
	release  chan struct{} // closed by Release
	relOnce  sync.Once
	watch    chan struct{} // closed once the node's stat and watch are wanted
	watchOne sync.Once
	revoked  chan struct{} // closed when revocation is requested (Revoke)
	revOnce  sync.Once
	swaps    chan swap // a node to take the lease's place (RWMutex.Downgrade)

	ctx    context.Context // cancelled, with err as cause, when done closes
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	err    error // why the lease ended; nil while held
	result error // what Release reports
}

// newLease takes over a node this Session just acquired. own delivers the
// result of the data watch set on the node: its stat (the fencing token)
// and the watch that reports its deletion. It may still be on the way, so
// that acquiring need not wait for it, or nil: then the watch is set when
// first wanted.
//
// mark makes its release record that it was clean (a lock with a
// lock-delay, see WithLockDelay).
func newLease(sess *zkcoord.Session, path string, own <-chan ownWatch, mark bool) *Lease {
	l := &Lease{
		sess:      sess,
		path:      path,
		mark:      mark,
		version:   -1,
		statReady: make(chan struct{}),
		done:      make(chan struct{}),
		finished:  make(chan struct{}),
		release:   make(chan struct{}),
		watch:     make(chan struct{}),
		revoked:   make(chan struct{}),
		swaps:     make(chan swap),
	}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	if own != nil {
		l.wantWatch()
	}
	go l.run(own)
	return l
}

// wantWatch asks run to read the node's stat and watch it.
func (l *Lease) wantWatch() { l.watchOne.Do(func() { close(l.watch) }) }

// Done is closed when the lease ends: released, or lost.
func (l *Lease) Done() <-chan struct{} {
	l.wantWatch()
	return l.done
}

// Context returns a context cancelled when the lease ends, with Err as its
// cause: run the holder's work under it.
func (l *Lease) Context() context.Context {
	l.wantWatch()
	return l.ctx
}

// Err returns nil while the lease is held. After Done closes it returns
// ErrReleased if the lease was released, or an error wrapping ErrLost and
// the cause (ErrNodeDeleted, or the Session's error) if it was lost.
func (l *Lease) Err() error {
	l.wantWatch()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Path returns the lease's node, for example
// "/locks/job/_c_6f1c…-lock-0000000007".
func (l *Lease) Path() string { return l.path }

// Token returns the fencing token: the creation zxid of the lease's node.
// ZooKeeper orders all writes, so every later holder of the same lock has a
// larger token. A resource that records the largest token it has seen can
// reject a holder that lost the lock without noticing. No zkcoord contender
// takes a lock whose sequence counter wrapped; a Curator or Kazoo client
// may, with a smaller token: see
// docs/protocol.md#sequence-numbers-and-their-wrap.
//
// The token is read from the server when first wanted (see Lease), so the
// first call may wait one round trip. It returns 0 if the lease ended
// before the token could be read.
func (l *Lease) Token() int64 {
	l.wantWatch()
	<-l.statReady
	return l.token
}

// Fence returns the lease's fence, for zkcoord.Session.GuardedMulti and
// GuardedSet: writes that succeed only while the lease's node exists (and
// has the version it had when acquired). Like Token it may wait for the
// node's stat; without it (the lease ended first) the fence checks only
// that the node exists.
func (l *Lease) Fence() zkcoord.Fence {
	l.wantWatch()
	<-l.statReady
	// The node's name is unique, so its existence alone proves ownership;
	// checking any version (-1) keeps a revocation request, which writes the
	// node's data, from failing the holder's guarded writes.
	return zkcoord.Fence{Path: l.path, Token: l.token, Version: -1, Unique: true}
}

// Release gives the lease up by deleting its node. It returns nil once the
// node is deleted, or the lease's error (wrapping ErrLost) if it had been
// lost before. If ctx ends first, Release returns ctx's error and the node
// is still deleted in the background, as long as the Session lives.
// Release is idempotent.
func (l *Lease) Release(ctx context.Context) error {
	l.relOnce.Do(func() { close(l.release) })
	select {
	case <-l.finished:
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.result
	case <-ctx.Done():
		return fmt.Errorf("lock: release %s: %w", l.path, ctx.Err())
	}
}

// releaseAsync asks for the lease to be released without waiting.
func (l *Lease) releaseAsync() { l.relOnce.Do(func() { close(l.release) }) }

// ended reports whether Done is closed.
func (l *Lease) ended() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// run is the one goroutine that owns the lease's state.
func (l *Lease) run(own <-chan ownWatch) {
	defer close(l.finished)
	statSet := false
	defer func() {
		if !statSet {
			close(l.statReady)
		}
	}()
	sessDone := l.sess.Done()
	want := l.watch
	if own != nil {
		want = nil
	}
	var w <-chan zkcoord.Event
	for {
		select {
		case <-want:
			want = nil
			own = watchOwn(context.Background(), l.sess, l.path)
		case r := <-own:
			own = nil
			if r.err != nil {
				if errors.Is(r.err, zkcoord.ErrNoNode) {
					l.end(lost(ErrNodeDeleted))
				} else {
					l.end(lost(l.sessErr(r.err)))
				}
				return
			}
			l.token, l.version, w = r.stat.Czxid, r.stat.Version, r.w
			statSet = true
			close(l.statReady)
			l.checkRevoked(r.data)
		case <-sessDone:
			l.end(lost(l.sess.Err()))
			return
		case ev, ok := <-w:
			switch {
			case ok && ev.Type == zkcoord.EventNodeDeleted:
				l.end(lost(ErrNodeDeleted))
				return
			case ok && ev.Type != zkcoord.EventNotWatching:
				// The node's data changed: watch again.
				var (
					data []byte
					err  error
				)
				data, w, err = l.rewatch()
				l.checkRevoked(data)
				if errors.Is(err, zkcoord.ErrNoNode) {
					l.end(lost(ErrNodeDeleted))
					return
				}
				if err != nil {
					// Without a watch a deletion would go unnoticed.
					l.end(lost(l.sessErr(err)))
					return
				}
			default:
				// The watch was dropped: the Session is ending. Wait for
				// it, or for a release.
				w = nil
			}
		case <-l.release:
			l.releaseNode()
			return
		case sw := <-l.swaps:
			if l.swapNode(sw) {
				return
			}
		}
	}
}

// sessErr prefers the Session's error, which says why it ended, to err.
func (l *Lease) sessErr(err error) error {
	if serr := l.sess.Err(); serr != nil {
		return serr
	}
	return err
}

// rewatch sets a new watch on the node, retrying over connection loss. Any
// error means the lease is lost: ErrNoNode that the node is gone, others
// that the Session ended or that the node can no longer be watched.
func (l *Lease) rewatch() ([]byte, <-chan zkcoord.Event, error) {
	// A ctx without Done: the call ends with the Session at the latest.
	data, _, w, err := l.sess.GetW(context.Background(), l.path)
	if err != nil {
		return nil, nil, err
	}
	return data, w, nil
}

// releaseNode deletes the node, retrying over connection loss for as long
// as the Session lives.
func (l *Lease) releaseNode() {
	// A ctx without Done runs the request on this goroutine; it still ends
	// with the Session.
	release := recipe.EnsureDeleted
	if l.mark {
		release = lockdelay.Release
	}
	if err := release(context.Background(), l.sess, l.path); err != nil {
		l.end(lost(l.sessErr(err)))
		return
	}
	l.released()
}

// released records a release and closes Done.
func (l *Lease) released() { l.finish(ErrReleased, nil) }

// end records a loss and closes Done.
func (l *Lease) end(err error) { l.finish(err, err) }

// finish records why the lease ended, err, and what a Release returns,
// result, and closes Done.
func (l *Lease) finish(err, result error) {
	l.mu.Lock()
	l.err = err
	l.result = result
	l.mu.Unlock()
	l.cancel(err)
	close(l.done)
}

func lost(cause error) error {
	if cause == nil {
		cause = zkcoord.ErrSessionClosed
	}
	return fmt.Errorf("%w: %w", ErrLost, cause)
}

var _ zkcoord.Ownership = (*Lease)(nil)
