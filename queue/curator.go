package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Errors of the Curator queues.
var (
	// ErrNoLockPath: Claim on a Curator queue made without WithLockPath.
	ErrNoLockPath = errors.New("queue: no lock path")
	// ErrInvalid: an empty id, or a delay item due before 1970.
	ErrInvalid = errors.New("queue: invalid argument")
)

// Option configures a queue. Every constructor accepts the package's
// options; WithLockPath applies to Curator's DistributedQueue layouts only,
// and the others refuse it with an error wrapping zkcoord.ErrInvalidPath.
type Option func(*options)

type options struct {
	lockPath string
}

// lockPathOf applies opts and returns the lock path they give.
func lockPathOf(opts []Option) string {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o.lockPath
}

// noLockPath refuses WithLockPath for a queue whose layout has no lock.
func noLockPath(path string, opts []Option) error {
	if lock := lockPathOf(opts); lock != "" {
		return fmt.Errorf("queue %s: lock path %s: %w: a lock path is for Curator's DistributedQueue layouts", path, lock, zkcoord.ErrInvalidPath)
	}
	return nil
}

// checkLockless checks the arguments of a queue whose layout has no lock.
func checkLockless(sess *zkcoord.Session, path string, opts []Option) error {
	if err := recipe.Validate(sess, path); err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	return noLockPath(path, opts)
}

// WithLockPath makes takers lock an item before they take it, as Curator's
// QueueBuilder.lockPath does: a taker creates the ephemeral node
// <lockPath>/<item>, reads the item, and deletes the item and the lock.
// Every consumer of the queue, Java or Go, must use the same lock path:
// a consumer that deletes without locking takes items that others hold.
//
// With a lock path, a take is settled after a lost reply (each item is
// returned by exactly one Take while the taker's Session lives), a Put is
// settled by a receipt "_c_<uuid>-put" under the lock path (so it adds its
// item exactly once), and Claim gives at-least-once processing. The lock
// path must differ from the queue's path.
func WithLockPath(path string) Option {
	return func(o *options) { o.lockPath = path }
}

// curatorTakes holds what every queue in a Curator layout offers; it is
// embedded in each of them.
type curatorTakes struct{ q *curatorQueue }

// newCurator returns the queue of type Q at path in layout l. It does no
// I/O.
func newCurator[Q ~struct{ curatorTakes }](sess *zkcoord.Session, path string, l layout, opts []Option) (*Q, error) {
	q, err := newCuratorQueue(sess, path, l, opts)
	if err != nil {
		return nil, err
	}
	return &Q{curatorTakes{q}}, nil
}

// Path returns the queue node's path.
func (t curatorTakes) Path() string { return t.q.path }

// Take removes the item at the head of the queue, waiting until there is
// one, and returns its items: one, or all those of one PutMulti (or of a
// Java service's putMulti), in order, each as the Java service's
// QueueSerializer wrote it. It returns early when ctx ends or the Session
// ends.
//
// Without a lock path, Take reads the item and deletes it at the version
// read, as Curator does: whoever deletes it has taken it, so no item is
// returned twice. If the reply to the delete is lost and the item is then
// gone, Take cannot tell its delete from another taker's and fails with an
// error wrapping ErrOutcomeUnknown: the item may have been taken by this
// Take and is then lost (at most once). With a lock path, Take claims the
// item first, and a lost reply is settled by the claim: only the end of
// the taker's Session leaves an outcome unknown.
//
// A node with an item's name whose data is not in Curator's framing is
// taken like any item and returned in a *CorruptError, with its data.
func (t curatorTakes) Take(ctx context.Context) ([][]byte, error) { return t.q.take(ctx, true) }

// TryTake is Take without waiting: it returns ErrEmpty if no item is ready.
func (t curatorTakes) TryTake(ctx context.Context) ([][]byte, error) { return t.q.take(ctx, false) }

// Claim locks the item at the head of the queue, waiting until there is
// one, and returns the claim: the item stays in the queue, skipped by
// every consumer that locks, until the claim is acknowledged (Ack, which
// deletes item and lock in one transaction) or released (Release), or
// the Session ends, when another consumer takes it again. So each item is
// processed at least once and removed at most once, as with a WorkQueue;
// consumers must tolerate a repeat. Claim.Items returns the items.
//
// Claim needs a lock path (WithLockPath); without one it fails with
// ErrNoLockPath. A corrupt node (see Take) is claimed and returned in a
// *CorruptError whose Claim is set: acknowledge it to remove the node, or
// release it.
func (t curatorTakes) Claim(ctx context.Context) (*Claim, error) { return t.q.claimOne(ctx, true) }

// TryClaim is Claim without waiting: it returns ErrEmpty if no item is
// ready.
func (t curatorTakes) TryClaim(ctx context.Context) (*Claim, error) { return t.q.claimOne(ctx, false) }

// Len returns the number of items in the queue: claimed ones and delay
// items not yet due included, foreign nodes not.
func (t curatorTakes) Len(ctx context.Context) (int, error) { return t.q.count(ctx) }

// CuratorQueue is a FIFO queue in the layout of Curator's
// DistributedQueue, so Java services using Curator and Go services share
// it: each takes what the other puts. Items are the bytes a Java
// service's QueueSerializer reads and writes. See the package
// documentation for the layout and the guarantees. It is safe for
// concurrent use.
type CuratorQueue struct {
	curatorTakes
}

// NewCurator returns the queue at path in the layout of Curator's
// DistributedQueue. It does no I/O.
func NewCurator(sess *zkcoord.Session, path string, opts ...Option) (*CuratorQueue, error) {
	return newCurator[CuratorQueue](sess, path, fifoLayout, opts)
}

// Put appends an item. It creates the queue node (and the lock path) if
// need be. Without a lock path, a Put whose reply is lost fails with an
// error wrapping ErrOutcomeUnknown: the item may or may not have been
// added (Curator's names leave no room to find it again). With one, the
// Put is settled and adds its item exactly once. Once its create is sent,
// Put waits for the outcome even if ctx ends, for as long as the Session
// lives.
func (q *CuratorQueue) Put(ctx context.Context, item []byte) error {
	return q.q.putItems(ctx, itemPrefix, [][]byte{item})
}

// PutMulti appends items in one node, as Curator's putMulti does: one
// create, so all of them are added or none, and a taker gets them together,
// in order, from one Take. See Put.
func (q *CuratorQueue) PutMulti(ctx context.Context, items [][]byte) error {
	return q.q.putItems(ctx, itemPrefix, items)
}

// CuratorPriorityQueue is a queue in the layout of Curator's
// DistributedPriorityQueue: items are served by priority, lower first,
// then in the order they were put. It is safe for concurrent use.
type CuratorPriorityQueue struct {
	curatorTakes
}

// NewCuratorPriority returns the priority queue at path in the layout of
// Curator's DistributedPriorityQueue. It does no I/O.
func NewCuratorPriority(sess *zkcoord.Session, path string, opts ...Option) (*CuratorPriorityQueue, error) {
	return newCurator[CuratorPriorityQueue](sess, path, priorityLayout, opts)
}

// Put adds an item with a priority (any int32; lower is served first). See
// CuratorQueue.Put.
func (q *CuratorPriorityQueue) Put(ctx context.Context, priority int32, item []byte) error {
	return q.q.putItems(ctx, priorityName(priority), [][]byte{item})
}

// PutMulti adds items with one priority in one node. See
// CuratorQueue.PutMulti.
func (q *CuratorPriorityQueue) PutMulti(ctx context.Context, priority int32, items [][]byte) error {
	return q.q.putItems(ctx, priorityName(priority), items)
}

// CuratorDelayQueue is a queue in the layout of Curator's
// DistributedDelayQueue: each item is due at a time given when it is put,
// in milliseconds, and is served once due, earliest first. Whether an item
// is due is decided by the taker's clock, as in Curator. It is safe for
// concurrent use.
type CuratorDelayQueue struct {
	curatorTakes
}

// NewCuratorDelay returns the delay queue at path in the layout of
// Curator's DistributedDelayQueue. It does no I/O.
func NewCuratorDelay(sess *zkcoord.Session, path string, opts ...Option) (*CuratorDelayQueue, error) {
	return newCurator[CuratorDelayQueue](sess, path, delayLayout, opts)
}

// Put adds an item due at the given time (a time in the past is due at
// once; one before 1970 is refused with ErrInvalid). See CuratorQueue.Put.
func (q *CuratorDelayQueue) Put(ctx context.Context, due time.Time, item []byte) error {
	return q.PutMulti(ctx, due, [][]byte{item})
}

// PutMulti adds items due at one time in one node. See
// CuratorQueue.PutMulti.
func (q *CuratorDelayQueue) PutMulti(ctx context.Context, due time.Time, items [][]byte) error {
	ms := due.UnixMilli()
	if ms <= 0 && len(items) > 0 { // no items: putItems says ErrBatch
		return fmt.Errorf("queue: put to %s: %w: due at %v, before 1970", q.q.path, ErrInvalid, due)
	}
	return q.q.putItems(ctx, delayName(ms), items)
}

// CuratorIDQueue is a queue in the layout of Curator's DistributedIdQueue:
// a FIFO queue whose items carry an id, by which they can be removed
// before they are taken. Ids are stored with "/" and "|" replaced by "_",
// as Curator stores them, so "a/b" and "a_b" are one id. It is safe for
// concurrent use.
type CuratorIDQueue struct {
	curatorTakes
}

// NewCuratorID returns the id queue at path in the layout of Curator's
// DistributedIdQueue. It does no I/O.
func NewCuratorID(sess *zkcoord.Session, path string, opts ...Option) (*CuratorIDQueue, error) {
	return newCurator[CuratorIDQueue](sess, path, idLayout, opts)
}

// Put adds an item with an id (not empty; ids need not be unique). See
// CuratorQueue.Put.
func (q *CuratorIDQueue) Put(ctx context.Context, id string, item []byte) error {
	if id == "" {
		return fmt.Errorf("queue: put to %s: %w: empty id", q.q.path, ErrInvalid)
	}
	return q.q.putItems(ctx, idName(id), [][]byte{item})
}

// Remove removes the items with id that no consumer holds, and returns how
// many it removed. With a lock path it locks each item first, as Curator
// does, so an item being processed is left alone. An item whose removal's
// reply is lost is gone but not counted.
func (q *CuratorIDQueue) Remove(ctx context.Context, id string) (int, error) {
	return q.q.removeID(ctx, cleanID(id))
}
