package counter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/zkcoord/zkcoord"
)

// ErrOverflow: Add would overflow a 32-bit count.
var ErrOverflow = errors.New("counter: 32-bit overflow")

// Count is the counter's value at one version of its node.
type Count struct {
	Value   int32
	Version int32
}

// Option configures a Counter.
type Option func(*options)

type options struct {
	seed int32
}

// WithSeed sets the value the node is created with, and the value an empty
// node reads as. Default 0.
func WithSeed(v int32) Option { return func(o *options) { o.seed = v } }

// Seed is WithSeed.
//
// Deprecated: use WithSeed, named like every other option.
func Seed(v int32) Option { return WithSeed(v) }

// Counter is a shared counter stored at one node.
type Counter struct {
	sess *zkcoord.Session
	path string
	seed int32
}

// New returns the counter at path. It does no I/O.
func New(sess *zkcoord.Session, path string, opts ...Option) (*Counter, error) {
	if err := zkcoord.ValidateRecipe(sess, path); err != nil {
		return nil, fmt.Errorf("counter: %w", err)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return &Counter{sess: sess, path: path, seed: o.seed}, nil
}

// Path returns the counter node's path.
func (c *Counter) Path() string { return c.path }

// Encode returns the 4-byte big-endian form of v.
func Encode(v int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(v))
}

// decode reads a count; empty data is the seed.
func (c *Counter) decode(data []byte, st *zkcoord.Stat) (Count, error) {
	switch len(data) {
	case 0:
		return Count{Value: c.seed, Version: st.Version}, nil
	case 4:
		return Count{Value: int32(binary.BigEndian.Uint32(data)), Version: st.Version}, nil
	}
	return Count{}, fmt.Errorf("counter: %s holds %d bytes, want 4: %w", c.path, len(data), zkcoord.ErrBadData)
}

// Get returns the current count.
func (c *Counter) Get(ctx context.Context) (Count, error) {
	for {
		data, st, err := c.sess.Get(ctx, c.path)
		if errors.Is(err, zkcoord.ErrNoNode) {
			if err := c.create(ctx); err != nil {
				return Count{}, err
			}
			continue
		}
		if err != nil {
			return Count{}, fmt.Errorf("counter: %w", err)
		}
		return c.decode(data, st)
	}
}

// create creates the node with the seed value; a node that exists is fine.
func (c *Counter) create(ctx context.Context) error {
	err := c.sess.Retry(ctx, func(ctx context.Context) error {
		for {
			_, err := c.sess.Create(ctx, c.path, Encode(c.seed), zkcoord.FlagPersistent)
			if errors.Is(err, zkcoord.ErrNoNode) {
				if err := c.sess.EnsureContainers(ctx, zkcoord.Parent(c.path)); err != nil {
					return err
				}
				continue
			}
			if errors.Is(err, zkcoord.ErrNodeExists) {
				return nil
			}
			return err
		}
	})
	if err != nil {
		return fmt.Errorf("counter: create %s: %w", c.path, err)
	}
	return nil
}

// SetCount sets the count whatever it is, and returns the new Count.
func (c *Counter) SetCount(ctx context.Context, v int32) (Count, error) {
	for {
		var st *zkcoord.Stat
		err := c.sess.Retry(ctx, func(ctx context.Context) error {
			var err error
			st, err = c.sess.Set(ctx, c.path, Encode(v), -1)
			return err
		})
		if errors.Is(err, zkcoord.ErrNoNode) {
			if err := c.create(ctx); err != nil {
				return Count{}, err
			}
			continue
		}
		if err != nil {
			return Count{}, fmt.Errorf("counter: set %s: %w", c.path, err)
		}
		return Count{Value: v, Version: st.Version}, nil
	}
}

// TrySetCount sets the count to v only if the node is still at prev's
// version. It reports whether it did; when it did not, the returned Count
// is the current one, to retry from.
func (c *Counter) TrySetCount(ctx context.Context, prev Count, v int32) (Count, bool, error) {
	var (
		out Count
		ok  bool
	)
	err := c.sess.Retry(ctx, func(ctx context.Context) error {
		var err error
		out, ok, err = c.trySet(ctx, prev, v)
		return err
	})
	if err != nil {
		return Count{}, false, err
	}
	return out, ok, nil
}

// trySet makes one attempt at TrySetCount. It returns a retryable error
// when the write is known not to have happened and may be sent again.
func (c *Counter) trySet(ctx context.Context, prev Count, v int32) (Count, bool, error) {
	st, err := c.sess.Set(ctx, c.path, Encode(v), prev.Version)
	if err == nil {
		return Count{Value: v, Version: st.Version}, true, nil
	}
	lost := zkcoord.IsRetryable(err)
	if !lost && !errors.Is(err, zkcoord.ErrBadVersion) {
		return Count{}, false, fmt.Errorf("counter: set %s: %w", c.path, err)
	}
	if lost && testHookOutcomeUnknown != nil {
		testHookOutcomeUnknown()
	}
	// Read the current count (after a lost reply, once reconnected). If it
	// is exactly what our write would have made, our write happened.
	cur, gerr := c.Get(ctx)
	if gerr != nil {
		return Count{}, false, gerr
	}
	if lost && cur.Version == prev.Version+1 && cur.Value == v {
		return cur, true, nil
	}
	if lost && cur.Version == prev.Version {
		// Our write did not happen: send it again.
		return Count{}, false, fmt.Errorf("counter: set %s: %w", c.path, err)
	}
	return cur, false, nil
}

// testHookOutcomeUnknown, if set, runs when a conditional write fails with
// a connection loss, before its outcome is looked up.
var testHookOutcomeUnknown func()

// Add adds delta (which may be negative) to the count, retrying on
// concurrent changes, and returns the new Count. It fails with ErrOverflow
// rather than wrap around.
func (c *Counter) Add(ctx context.Context, delta int32) (Count, error) {
	cur, err := c.Get(ctx)
	if err != nil {
		return Count{}, err
	}
	for {
		next := int64(cur.Value) + int64(delta)
		if next > math.MaxInt32 || next < math.MinInt32 {
			return Count{}, fmt.Errorf("%w: %d + %d", ErrOverflow, cur.Value, delta)
		}
		n, ok, err := c.TrySetCount(ctx, cur, int32(next))
		if err != nil {
			return Count{}, err
		}
		if ok {
			return n, nil
		}
		cur = n
	}
}
