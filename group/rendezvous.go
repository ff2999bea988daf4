package group

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Errors of rendezvous.
var (
	// ErrNoRendezvous: there is no rendezvous node at the path (never
	// created, or gone with its creator).
	ErrNoRendezvous = errors.New("group: no rendezvous")
	// ErrFilled: the rendezvous was already filled.
	ErrFilled = errors.New("group: rendezvous already filled")
	// ErrExists: NewRendezvous found a node already at the path. It wraps
	// zkcoord.ErrNodeExists, the toolkit's one "already exists".
	ErrExists = fmt.Errorf("group: rendezvous: %w", zkcoord.ErrNodeExists)
)

// Rendezvous is an empty node waiting to be filled by a peer.
type Rendezvous struct {
	sess *zkcoord.Session
	path string
}

// NewRendezvous creates an empty ephemeral node at path (missing parents
// are created as containers), to be filled once by a peer with Fill. It
// fails with ErrExists if the node exists.
func NewRendezvous(ctx context.Context, sess *zkcoord.Session, path string) (*Rendezvous, error) {
	if err := zkcoord.ValidateRecipe(sess, path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	for {
		_, err := sess.Create(ctx, path, []byte{}, zkcoord.FlagEphemeral)
		switch {
		case err == nil:
			return &Rendezvous{sess: sess, path: path}, nil
		case errors.Is(err, zkcoord.ErrNoNode):
			if err := sess.EnsureContainers(ctx, zkcoord.Parent(path)); err != nil {
				return nil, fmt.Errorf("group: rendezvous %s: %w", path, err)
			}
		case errors.Is(err, zkcoord.ErrNodeExists):
			return nil, fmt.Errorf("%w: %s", ErrExists, path)
		case zkcoord.IsRetryable(err):
			// Did our create happen? An ephemeral node of ours says so.
			ok, st, err := sess.Exists(ctx, path)
			if err != nil {
				return nil, fmt.Errorf("group: rendezvous %s: %w", path, err)
			}
			if ok && st.EphemeralOwner == sess.ID() {
				return &Rendezvous{sess: sess, path: path}, nil
			}
			if ok {
				return nil, fmt.Errorf("%w: %s", ErrExists, path)
			}
		default:
			return nil, fmt.Errorf("group: rendezvous %s: %w", path, err)
		}
	}
}

// Path returns the rendezvous node's path, to hand to the peer.
func (r *Rendezvous) Path() string { return r.path }

// Wait blocks until a peer has filled the rendezvous, and returns what it
// wrote. It fails with ErrNoRendezvous if the node is deleted first.
func (r *Rendezvous) Wait(ctx context.Context) ([]byte, error) {
	return Await(ctx, r.sess, r.path)
}

// Close deletes the rendezvous node.
func (r *Rendezvous) Close(ctx context.Context) error {
	err := r.sess.EnsureDeleted(ctx, r.path)
	if err != nil && r.sess.Err() == nil {
		return fmt.Errorf("group: close rendezvous %s: %w", r.path, err)
	}
	return nil
}

// Fill writes data into the rendezvous at path. Only the first Fill
// succeeds; later ones fail with ErrFilled. It fails with ErrNoRendezvous
// if there is no node at path.
func Fill(ctx context.Context, sess *zkcoord.Session, path string, data []byte) error {
	if err := zkcoord.ValidateRecipe(sess, path); err != nil {
		return fmt.Errorf("group: %w", err)
	}
	if data == nil {
		data = []byte{}
	}
	for {
		_, err := sess.Set(ctx, path, data, 0) // version 0: still empty
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zkcoord.ErrNoNode):
			return fmt.Errorf("%w: %s", ErrNoRendezvous, path)
		case errors.Is(err, zkcoord.ErrBadVersion):
			return fmt.Errorf("%w: %s", ErrFilled, path)
		case zkcoord.IsRetryable(err):
			got, st, err := sess.Get(ctx, path)
			switch {
			case errors.Is(err, zkcoord.ErrNoNode):
				return fmt.Errorf("%w: %s", ErrNoRendezvous, path)
			case err != nil:
				return fmt.Errorf("group: fill %s: %w", path, err)
			case st.Version == 0:
				continue // our write did not happen
			case st.Version == 1 && bytes.Equal(got, data):
				return nil // it did
			}
			return fmt.Errorf("%w: %s", ErrFilled, path)
		default:
			return fmt.Errorf("group: fill %s: %w", path, err)
		}
	}
}

// Await blocks until the rendezvous at path is filled and returns its
// data. It fails with ErrNoRendezvous if there is no node at path, or if
// the node is deleted before it is filled.
func Await(ctx context.Context, sess *zkcoord.Session, path string) ([]byte, error) {
	if err := zkcoord.ValidateRecipe(sess, path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	// A plain read first: a filled node needs no watch.
	data, st, err := sess.Get(ctx, path)
	if err == nil && st.Version > 0 {
		return data, nil
	}
	for {
		data, st, w, err := sess.GetW(ctx, path)
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil, fmt.Errorf("%w: %s", ErrNoRendezvous, path)
		}
		if err != nil {
			return nil, fmt.Errorf("group: await %s: %w", path, err)
		}
		if st.Version > 0 {
			return data, nil
		}
		select {
		case <-w:
		case <-ctx.Done():
			return nil, fmt.Errorf("group: await %s: %w", path, ctx.Err())
		case <-sess.Done():
			return nil, fmt.Errorf("group: await %s: %w", path, sess.Err())
		}
	}
}
