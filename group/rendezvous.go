package group

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
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
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("group: rendezvous %s: %w", path, err) // not sent
		}
		_, err := sess.Create(ctx, path, []byte{}, zkcoord.FlagEphemeral)
		switch {
		case err == nil:
			return &Rendezvous{sess: sess, path: path}, nil
		case errors.Is(err, zkcoord.ErrNoNode):
			if err := sess.EnsureContainers(ctx, zkcoord.Parent(path)); err != nil {
				return nil, fmt.Errorf("group: rendezvous %s: %w", path, err)
			}
			continue
		case errors.Is(err, zkcoord.ErrNodeExists):
			return nil, fmt.Errorf("%w: %s", ErrExists, path)
		}
		lostReply(err)
		// Our ephemeral node, owned by this Session, says the create
		// happened.
		found, err := zkcoord.Settle(ctx, sess, zkcoord.Write{Kind: zkcoord.WriteCreate, Path: path, Data: []byte{}, Flags: zkcoord.FlagEphemeral}, err)
		switch {
		case err != nil:
			return nil, fmt.Errorf("group: rendezvous %s: %w", path, err)
		case found.Done:
			return &Rendezvous{sess: sess, path: path}, nil
		case found.Stat != nil:
			return nil, fmt.Errorf("%w: %s", ErrExists, path)
		}
		// Not created: send it again.
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
	err := recipe.EnsureDeleted(ctx, r.sess, r.path)
	if err != nil && r.sess.Err() == nil {
		return fmt.Errorf("group: close rendezvous %s: %w", r.path, err)
	}
	return nil
}

// Fill writes data into the rendezvous at path. Only the first Fill
// succeeds; later ones fail with ErrFilled. It fails with ErrNoRendezvous
// if there is no node at path. A Fill whose reply is lost with the
// connection is settled by reading the node again (zkcoord.Settle):
// still empty, it is sent again; filled with other data, ErrFilled; filled
// with exactly its data, which another peer may have written too, or gone,
// it fails with an error wrapping zkcoord.ErrOutcomeUnknown.
func Fill(ctx context.Context, sess *zkcoord.Session, path string, data []byte) error {
	if err := recipe.Validate(sess, path); err != nil {
		return fmt.Errorf("group: %w", err)
	}
	if data == nil {
		data = []byte{}
	}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("group: fill %s: %w", path, err) // not sent
		}
		_, err := sess.Set(ctx, path, data, 0) // version 0: still empty
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zkcoord.ErrNoNode):
			return fmt.Errorf("%w: %s", ErrNoRendezvous, path)
		case errors.Is(err, zkcoord.ErrBadVersion):
			return fmt.Errorf("%w: %s", ErrFilled, path)
		}
		lostReply(err)
		// Version 0 means not written; version 1 with other data, filled by
		// another peer; version 1 with our data could be another peer's
		// equal Fill: unknown.
		found, err := zkcoord.Settle(ctx, sess, zkcoord.Write{Kind: zkcoord.WriteSet, Path: path, Data: data, Version: 0}, err)
		switch {
		case err != nil:
			return fmt.Errorf("group: fill %s: %w", path, err)
		case found.Stat.Version > 0:
			return fmt.Errorf("%w: %s", ErrFilled, path)
		}
		// Not written: send it again.
	}
}

// lostReply runs the test hook if err is a connection loss.
func lostReply(err error) {
	if zkcoord.IsRetryable(err) && testHookOutcomeUnknown != nil {
		testHookOutcomeUnknown()
	}
}

// testHookOutcomeUnknown, if set, runs when a write fails with a
// connection loss, before its outcome is looked up.
var testHookOutcomeUnknown func()

// Await blocks until the rendezvous at path is filled and returns its
// data. It fails with ErrNoRendezvous if there is no node at path, or if
// the node is deleted before it is filled.
func Await(ctx context.Context, sess *zkcoord.Session, path string) ([]byte, error) {
	if err := recipe.Validate(sess, path); err != nil {
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
