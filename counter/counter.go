package counter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// ErrOverflow: Add would overflow the counter's integer type.
var ErrOverflow = errors.New("counter: overflow")

// Int is the integer type a counter holds: int32 (Curator's SharedCount) or
// int64 (Curator's DistributedAtomicLong).
type Int interface{ int32 | int64 }

// CountOf is a counter's value at one version of its node.
type CountOf[T Int] struct {
	Value   T
	Version int32
}

// Count is a 32-bit counter's value at one version of its node.
type Count = CountOf[int32]

// Count64 is a 64-bit counter's value at one version of its node.
type Count64 = CountOf[int64]

// Option configures a counter.
type Option func(*options)

type options struct {
	seed   int64
	events chan<- zkcoord.RecoveryEvent
}

// supervise returns the options of zkcoord.Supervise for WatchConfig.
func (o options) supervise() []zkcoord.SuperviseOption {
	if o.events == nil {
		return nil
	}
	return []zkcoord.SuperviseOption{zkcoord.WithRecoveryEvents(o.events)}
}

// WithSeed sets the value the node is created with, and the value an empty
// node reads as. Default 0.
func WithSeed(v int32) Option { return func(o *options) { o.seed = int64(v) } }

// WithSeed64 is WithSeed for a 64-bit counter. New refuses a seed that does
// not fit in 32 bits.
func WithSeed64(v int64) Option { return func(o *options) { o.seed = v } }

// WithRecoveryEvents sends every zkcoord.RecoveryEvent of a WatchConfig
// watcher (session started, session ended with its cause, recovering,
// recovered) to ch; its owner is the watcher, until it has ended.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
// New and New64 reject it: a Counter lives on one Session.
func WithRecoveryEvents(ch chan<- zkcoord.RecoveryEvent) Option {
	return func(o *options) { o.events = ch }
}

// Of is a shared counter of integer type T stored at one node. It is safe
// for concurrent use.
type Of[T Int] struct {
	sess *zkcoord.Session
	path string
	seed T
}

// Counter is a 32-bit counter, compatible with Curator's SharedCount.
type Counter = Of[int32]

// Counter64 is a 64-bit counter, compatible with Curator's
// DistributedAtomicLong.
type Counter64 = Of[int64]

// New returns the 32-bit counter at path. It does no I/O.
func New(sess *zkcoord.Session, path string, opts ...Option) (*Counter, error) {
	return newOf[int32](sess, path, opts)
}

// New64 returns the 64-bit counter at path. It does no I/O.
func New64(sess *zkcoord.Session, path string, opts ...Option) (*Counter64, error) {
	return newOf[int64](sess, path, opts)
}

func newOf[T Int](sess *zkcoord.Session, path string, opts []Option) (*Of[T], error) {
	if sess == nil {
		return nil, fmt.Errorf("counter: %w", zkcoord.ErrNilSession)
	}
	o, err := newOptions[T](path, opts)
	if err != nil {
		return nil, err
	}
	if o.events != nil {
		return nil, fmt.Errorf("counter: %w: recovery events need WatchConfig (a Session cannot be renewed)", zkcoord.ErrInvalidConfig)
	}
	return &Of[T]{sess: sess, path: path, seed: T(o.seed)}, nil
}

// newOptions checks path and opts for a counter of type T.
func newOptions[T Int](path string, opts []Option) (options, error) {
	if err := recipe.ValidatePath(path); err != nil {
		return options{}, fmt.Errorf("counter: %w", err)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if int64(T(o.seed)) != o.seed {
		return options{}, fmt.Errorf("counter: %w: seed %d does not fit the counter", zkcoord.ErrInvalidConfig, o.seed)
	}
	return o, nil
}

// Path returns the counter node's path.
func (c *Of[T]) Path() string { return c.path }

// Encode returns the 4-byte big-endian form of v, as Curator's SharedCount
// writes it.
func Encode(v int32) []byte { return encode(v) }

// Encode64 returns the 8-byte big-endian form of v, as Curator's
// DistributedAtomicLong writes it.
func Encode64(v int64) []byte { return encode(v) }

func encode[T Int](v T) []byte {
	if size[T]() == 4 {
		return binary.BigEndian.AppendUint32(nil, uint32(v))
	}
	return binary.BigEndian.AppendUint64(nil, uint64(v))
}

// size is the number of bytes of T's encoding.
func size[T Int]() int {
	var v T
	return int(unsafe.Sizeof(v))
}

// decode reads a count; empty data is the seed.
func (c *Of[T]) decode(data []byte, st *zkcoord.Stat) (CountOf[T], error) {
	n := size[T]()
	switch len(data) {
	case 0:
		return CountOf[T]{Value: c.seed, Version: st.Version}, nil
	case n:
		if n == 4 {
			return CountOf[T]{Value: T(int32(binary.BigEndian.Uint32(data))), Version: st.Version}, nil
		}
		return CountOf[T]{Value: T(int64(binary.BigEndian.Uint64(data))), Version: st.Version}, nil
	}
	return CountOf[T]{}, fmt.Errorf("counter: %s holds %d bytes, want %d: %w", c.path, len(data), n, zkcoord.ErrBadData)
}

// Get returns the current count. It only reads: a counter whose node does
// not exist yet reads as the seed at version 0, the count its node is
// created with by the first write (Add, SetCount or TrySetCount).
func (c *Of[T]) Get(ctx context.Context) (CountOf[T], error) {
	cur, _, err := c.get(ctx)
	return cur, err
}

// get is Get, also returning the node's czxid (0 when it is missing).
func (c *Of[T]) get(ctx context.Context) (CountOf[T], int64, error) {
	data, st, err := c.sess.Get(ctx, c.path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return CountOf[T]{Value: c.seed}, 0, nil
	}
	if err != nil {
		return CountOf[T]{}, 0, fmt.Errorf("counter: %w", err)
	}
	cur, err := c.decode(data, st)
	return cur, st.Czxid, err
}

// create creates the node with the seed value; a node that exists is fine.
func (c *Of[T]) create(ctx context.Context) error {
	if err := recipe.EnsureNode(ctx, c.sess, c.path, encode(c.seed), zkcoord.FlagPersistent); err != nil {
		return fmt.Errorf("counter: create %s: %w", c.path, err)
	}
	return nil
}

// SetCount sets the count whatever it is, and returns the new Count.
func (c *Of[T]) SetCount(ctx context.Context, v T) (CountOf[T], error) {
	for {
		var st *zkcoord.Stat
		err := c.sess.Retry(ctx, func(ctx context.Context) error {
			var err error
			st, err = c.sess.Set(ctx, c.path, encode(v), -1)
			return err
		})
		if errors.Is(err, zkcoord.ErrNoNode) {
			if err := c.create(ctx); err != nil {
				return CountOf[T]{}, err
			}
			continue
		}
		if err != nil {
			return CountOf[T]{}, fmt.Errorf("counter: set %s: %w", c.path, err)
		}
		return CountOf[T]{Value: v, Version: st.Version}, nil
	}
}

// TrySetCount sets the count to v only if the node is still at prev's
// version. It reports whether it did; when it did not, the returned Count
// is the current one, to retry from. A missing node counts as the seed at
// version 0 (see Get): it is created so before the write.
//
// A write whose reply is lost with the connection is settled by reading
// the node again (see zkcoord.Settle): if it did not happen it is
// sent again, or reported as not done; if nothing on the server can tell,
// TrySetCount fails with an error wrapping zkcoord.ErrOutcomeUnknown, and
// the count may or may not have been set. So does a write whose ctx ends
// while it is in flight.
func (c *Of[T]) TrySetCount(ctx context.Context, prev CountOf[T], v T) (CountOf[T], bool, error) {
	out, _, ok, err := c.trySetCount(ctx, prev, 0, v)
	return out, ok, err
}

// trySetCount is TrySetCount for the node whose czxid is czxid (0: not
// known); it also returns the czxid of the node the returned count is of.
func (c *Of[T]) trySetCount(ctx context.Context, prev CountOf[T], czxid int64, v T) (CountOf[T], int64, bool, error) {
	var (
		out CountOf[T]
		ok  bool
	)
	err := c.sess.Retry(ctx, func(ctx context.Context) error {
		var err error
		out, czxid, ok, err = c.trySet(ctx, prev, czxid, v)
		return err
	})
	if err != nil {
		return CountOf[T]{}, 0, false, err
	}
	return out, czxid, ok, nil
}

// trySet makes one attempt at TrySetCount. It returns a retryable error
// when the write is known not to have happened and may be sent again.
func (c *Of[T]) trySet(ctx context.Context, prev CountOf[T], czxid int64, v T) (CountOf[T], int64, bool, error) {
	if err := ctx.Err(); err != nil {
		return CountOf[T]{}, 0, false, err // not sent
	}
	data := encode(v)
	st, err := c.sess.Set(ctx, c.path, data, prev.Version)
	switch {
	case err == nil:
		return CountOf[T]{Value: v, Version: st.Version}, st.Czxid, true, nil
	case errors.Is(err, zkcoord.ErrBadVersion):
		cur, czxid, err := c.get(ctx)
		return cur, czxid, false, err
	case errors.Is(err, zkcoord.ErrNoNode):
		// A missing node reads as the seed at version 0 (see Get): create
		// it so, and write again, conditionally as before.
		if err := c.create(ctx); err != nil {
			return CountOf[T]{}, 0, false, err
		}
		return c.trySet(ctx, prev, 0, v)
	}
	if zkcoord.IsRetryable(err) && testHookOutcomeUnknown != nil {
		testHookOutcomeUnknown()
	}
	found, serr := zkcoord.Settle(ctx, c.sess, zkcoord.Write{Kind: zkcoord.WriteSet, Path: c.path, Data: data, Version: prev.Version, Czxid: czxid}, err)
	if serr != nil {
		return CountOf[T]{}, 0, false, fmt.Errorf("counter: set %s: %w", c.path, serr)
	}
	if found.Stat.Version <= prev.Version {
		// Our write did not happen: send it again.
		return CountOf[T]{}, czxid, false, fmt.Errorf("counter: set %s: %w", c.path, err)
	}
	// Another write took the version ours expected.
	cur, derr := c.decode(found.Data, found.Stat)
	return cur, found.Stat.Czxid, false, derr
}

// testHookOutcomeUnknown, if set, runs when a conditional write fails with
// a connection loss, before its outcome is looked up.
var testHookOutcomeUnknown func()

// Add adds delta (which may be negative) to the count, retrying on
// concurrent changes, and returns the new Count. It fails with ErrOverflow
// rather than wrap around, and with an error wrapping
// zkcoord.ErrOutcomeUnknown when a write's reply was lost and the count
// cannot tell whether it happened (see TrySetCount): the increment may or
// may not be in the count.
func (c *Of[T]) Add(ctx context.Context, delta T) (CountOf[T], error) {
	cur, czxid, err := c.get(ctx)
	if err != nil {
		return CountOf[T]{}, err
	}
	for {
		next := cur.Value + delta // wraps on overflow, which is caught here
		if (delta > 0 && next < cur.Value) || (delta < 0 && next > cur.Value) {
			return CountOf[T]{}, fmt.Errorf("%w: %d + %d", ErrOverflow, cur.Value, delta)
		}
		n, at, ok, err := c.trySetCount(ctx, cur, czxid, next)
		if err != nil {
			return CountOf[T]{}, err
		}
		if ok {
			return n, nil
		}
		cur, czxid = n, at
	}
}
