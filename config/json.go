package config

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Value is one version of a JSON configuration node, decoded.
type Value[T any] struct {
	Value   T
	Version int32
	Zxid    int64
	Exists  bool
	// Err is set, and Value is the zero value, when a version delivered by
	// Watch does not decode as T. It wraps zkcoord.ErrBadData.
	Err error
}

// JSON is a configuration node holding a value of type T encoded as JSON.
type JSON[T any] struct {
	node *Node
}

// NewJSON returns the JSON configuration node at path. It does no I/O.
func NewJSON[T any](sess *zkcoord.Session, path string, opts ...Option) (*JSON[T], error) {
	n, err := New(sess, path, opts...)
	if err != nil {
		return nil, err
	}
	return &JSON[T]{node: n}, nil
}

// Node returns the underlying raw node.
func (j *JSON[T]) Node() *Node { return j.node }

func (j *JSON[T]) decode(v Version) (Value[T], error) {
	out := Value[T]{Version: v.Version, Zxid: v.Zxid, Exists: v.Exists}
	if !v.Exists {
		return out, nil
	}
	if err := json.Unmarshal(v.Data, &out.Value); err != nil {
		var zero T
		out.Value = zero
		return out, fmt.Errorf("config: %s does not hold JSON for %T: %v: %w", j.node.path, zero, err, zkcoord.ErrBadData)
	}
	return out, nil
}

func encode[T any](v T) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("config: encode %T: %w", v, err)
	}
	return b, nil
}

// Get reads and decodes the current version. It fails with ErrNotFound if
// the node does not exist and with an error wrapping zkcoord.ErrBadData if
// it does not decode.
func (j *JSON[T]) Get(ctx context.Context) (Value[T], error) {
	v, err := j.node.Get(ctx)
	if err != nil {
		return Value[T]{}, err
	}
	return j.decode(v)
}

// Create creates the node holding v, or fails with ErrExists.
func (j *JSON[T]) Create(ctx context.Context, v T) (Value[T], error) {
	data, err := encode(v)
	if err != nil {
		return Value[T]{}, err
	}
	ver, err := j.node.Create(ctx, data)
	if err != nil {
		return Value[T]{}, err
	}
	return Value[T]{Value: v, Version: ver.Version, Zxid: ver.Zxid, Exists: true}, nil
}

// Set writes v if the node is still at version (AnyVersion: whatever it
// is). See Node.Set.
func (j *JSON[T]) Set(ctx context.Context, v T, version int32) (Value[T], error) {
	data, err := encode(v)
	if err != nil {
		return Value[T]{}, err
	}
	ver, err := j.node.Set(ctx, data, version)
	if err != nil {
		return Value[T]{}, err
	}
	return Value[T]{Value: v, Version: ver.Version, Zxid: ver.Zxid, Exists: true}, nil
}

// Update runs a read-modify-write loop: fn receives the current value
// (Exists false, and the zero T, if the node does not exist) and returns
// the new one. A current version that does not decode stops the loop with
// an error wrapping zkcoord.ErrBadData; it is never overwritten.
func (j *JSON[T]) Update(ctx context.Context, fn func(cur Value[T]) (T, error)) (Value[T], error) {
	var written T
	ver, err := j.node.Update(ctx, func(cur Version) ([]byte, error) {
		v, err := j.decode(cur)
		if err != nil {
			return nil, err
		}
		next, err := fn(v)
		if err != nil {
			return nil, err
		}
		written = next
		return encode(next)
	})
	if err != nil {
		return Value[T]{}, err
	}
	return Value[T]{Value: written, Version: ver.Version, Zxid: ver.Zxid, Exists: true}, nil
}

// Watch delivers decoded versions; see Node.Watch. A version that does not
// decode is delivered with Err set, and watching goes on.
func (j *JSON[T]) Watch(ctx context.Context) *Watcher[Value[T]] {
	return watch(ctx, j.node, j.convert)
}

// convert decodes a version for a watcher: one that does not decode
// carries the error.
func (j *JSON[T]) convert(v Version) Value[T] {
	out, err := j.decode(v)
	out.Err = err
	return out
}
