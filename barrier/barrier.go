package barrier

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Option configures a Barrier.
type Option func(*options)

type options struct {
	flags int32
}

// WithEphemeral makes Set create the barrier node as an ephemeral node, so
// that the barrier falls when the Session that set it ends. By default the
// node is persistent, as in Curator's DistributedBarrier.
func WithEphemeral() Option {
	return func(o *options) { o.flags = zkcoord.FlagEphemeral }
}

// Barrier is a node whose existence blocks waiters. It is safe for
// concurrent use.
type Barrier struct {
	sess *zkcoord.Session
	path string
	opts options
}

// New returns the barrier at path. It does no I/O.
func New(sess *zkcoord.Session, path string, opts ...Option) (*Barrier, error) {
	if err := validate(sess, path); err != nil {
		return nil, err
	}
	b := &Barrier{sess: sess, path: path}
	for _, o := range opts {
		o(&b.opts)
	}
	return b, nil
}

func validate(sess *zkcoord.Session, path string) error {
	if err := recipe.Validate(sess, path); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	return nil
}

// Path returns the barrier node's path.
func (b *Barrier) Path() string { return b.path }

// Set raises the barrier by creating its node; missing parents are created
// as containers. Setting a barrier that is already set does nothing.
func (b *Barrier) Set(ctx context.Context) error {
	// A create that exists afterwards has succeeded, whoever made it, so
	// connection losses can simply be retried.
	if err := recipe.EnsureNode(ctx, b.sess, b.path, nil, b.opts.flags); err != nil {
		return fmt.Errorf("barrier: set %s: %w", b.path, err)
	}
	return nil
}

// Remove lowers the barrier by deleting its node, releasing every waiter.
// Removing a barrier that is not set does nothing.
func (b *Barrier) Remove(ctx context.Context) error {
	err := recipe.EnsureDeleted(ctx, b.sess, b.path)
	if err != nil {
		return fmt.Errorf("barrier: remove %s: %w", b.path, err)
	}
	return nil
}

// IsSet reports whether the barrier node exists.
func (b *Barrier) IsSet(ctx context.Context) (bool, error) {
	ok, _, err := b.sess.Exists(ctx, b.path)
	if err != nil {
		return false, fmt.Errorf("barrier: %w", err)
	}
	return ok, nil
}

// Wait blocks until the barrier is not set: it returns at once if the node
// does not exist, and otherwise when the node is deleted. It returns early
// with an error when ctx ends or the Session ends.
func (b *Barrier) Wait(ctx context.Context) error {
	for {
		// GetW, not ExistsW: on a missing node it leaves no watch behind.
		_, _, w, err := b.sess.GetW(ctx, b.path)
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("barrier: wait on %s: %w", b.path, err)
		}
		if _, err := recipe.WaitEvent(ctx, b.sess, w); err != nil {
			return fmt.Errorf("barrier: wait on %s: %w", b.path, err)
		}
	}
}
