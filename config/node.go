package config

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Errors of this package.
var (
	// ErrNotFound: the configuration node does not exist.
	ErrNotFound = errors.New("config: not found")
	// ErrExists: Create found the node already there. It wraps
	// zkcoord.ErrNodeExists, the toolkit's one "already exists".
	ErrExists = fmt.Errorf("config: %w", zkcoord.ErrNodeExists)
	// ErrConflict: the node changed since the version given to Set.
	ErrConflict = errors.New("config: version conflict")
)

// AnyVersion makes Set write whatever the current version.
const AnyVersion int32 = -1

// Version is one version of a configuration node.
type Version struct {
	Data []byte
	// Version is the node's data version, the one to pass to Set.
	Version int32
	// Zxid is the zxid of the write that produced this version; it grows
	// with every change, even across a delete and re-create.
	Zxid int64
	// Exists is false for a node that does not exist.
	Exists bool

	czxid int64 // the node's, to settle a write whose reply is lost
}

func versionOf(data []byte, st *zkcoord.Stat) Version {
	return Version{Data: data, Version: st.Version, Zxid: st.Mzxid, Exists: true, czxid: st.Czxid}
}

// Node is a configuration node.
type Node struct {
	sess *zkcoord.Session
	path string
}

// New returns the configuration node at path. It does no I/O. It takes
// the package's options, and refuses WithRecoveryEvents: a Node lives on
// one Session.
func New(sess *zkcoord.Session, path string, opts ...Option) (*Node, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.events != nil {
		return nil, fmt.Errorf("config: %w: recovery events need WatchConfig (a Session cannot be renewed)", zkcoord.ErrInvalidConfig)
	}
	return &Node{sess: sess, path: path}, nil
}

// Path returns the node's path.
func (n *Node) Path() string { return n.path }

// Get reads the current version, or fails with ErrNotFound.
func (n *Node) Get(ctx context.Context) (Version, error) {
	data, st, err := n.sess.Get(ctx, n.path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return Version{Version: -1}, fmt.Errorf("%w: %s", ErrNotFound, n.path)
	}
	if err != nil {
		return Version{}, fmt.Errorf("config: %w", err)
	}
	return versionOf(data, st), nil
}

// Create creates the node with data, or fails with ErrExists.
func (n *Node) Create(ctx context.Context, data []byte) (Version, error) {
	if data == nil {
		data = []byte{}
	}
	var v Version
	err := n.sess.Retry(ctx, func(ctx context.Context) error {
		var err error
		v, err = n.create(ctx, data)
		return err
	})
	return v, err
}

// create makes one attempt at Create. It returns a retryable error when the
// create is known not to have happened and may be sent again.
func (n *Node) create(ctx context.Context, data []byte) (Version, error) {
	if err := ctx.Err(); err != nil {
		return Version{}, err // not sent
	}
	_, st, err := n.sess.CreateWithStat(ctx, n.path, data, zkcoord.FlagPersistent)
	if errors.Is(err, zkcoord.ErrNoNode) {
		if err := n.sess.EnsurePath(ctx, zkcoord.Parent(n.path)); err != nil {
			return Version{}, fmt.Errorf("config: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return Version{}, err
		}
		_, st, err = n.sess.CreateWithStat(ctx, n.path, data, zkcoord.FlagPersistent)
	}
	switch {
	case err == nil:
		// The create's own reply says what it made: no read that could
		// fail after the write succeeded.
		return Version{Data: data, Version: st.Version, Zxid: st.Mzxid, Exists: true, czxid: st.Czxid}, nil
	case errors.Is(err, zkcoord.ErrNodeExists):
		return Version{}, fmt.Errorf("%w: %s", ErrExists, n.path)
	}
	lostReply(err)
	found, serr := zkcoord.Settle(ctx, n.sess, zkcoord.Write{Kind: zkcoord.WriteCreate, Path: n.path, Data: data}, err)
	switch {
	case serr != nil:
		return Version{}, fmt.Errorf("config: create %s: %w", n.path, serr)
	case found.Stat == nil:
		return Version{}, fmt.Errorf("config: create %s: %w", n.path, err) // not created: again
	}
	return Version{}, fmt.Errorf("%w: %s", ErrExists, n.path)
}

// testHookOutcomeUnknown, if set, runs when a write fails with a connection
// loss, before its outcome is looked up.
var testHookOutcomeUnknown func()

// lostReply runs the test hook if err is a connection loss.
func lostReply(err error) {
	if zkcoord.IsRetryable(err) && testHookOutcomeUnknown != nil {
		testHookOutcomeUnknown()
	}
}

// Set writes data if the node is still at version (AnyVersion: whatever
// it is), and returns the new version. It fails with ErrConflict if the
// node has changed and with ErrNotFound if it does not exist.
//
// A write whose reply is lost with the connection is settled by reading
// the node again (see zkcoord.Settle): if it did not happen it is
// sent again, or reported as a conflict; if nothing on the server can
// tell (the next version holds exactly this data, which another writer
// may have written too), Set fails with an error wrapping
// zkcoord.ErrOutcomeUnknown, and the data may or may not have been
// written. So does a write whose ctx ends while it is in flight. A write
// at AnyVersion is sent again.
func (n *Node) Set(ctx context.Context, data []byte, version int32) (Version, error) {
	return n.setAt(ctx, data, Version{Version: version})
}

// setAt is Set at at.Version, for the node whose czxid is at.czxid (0: not
// known).
func (n *Node) setAt(ctx context.Context, data []byte, at Version) (Version, error) {
	if data == nil {
		data = []byte{}
	}
	var v Version
	err := n.sess.Retry(ctx, func(ctx context.Context) error {
		var err error
		v, err = n.set(ctx, data, at)
		return err
	})
	return v, err
}

// set makes one attempt at Set. It returns a retryable error when the write
// may be sent again: it is known not to have happened, or it writes
// whatever the version.
func (n *Node) set(ctx context.Context, data []byte, at Version) (Version, error) {
	if err := ctx.Err(); err != nil {
		return Version{}, err // not sent
	}
	version := at.Version
	st, err := n.sess.Set(ctx, n.path, data, version)
	switch {
	case err == nil:
		return versionOf(data, st), nil
	case errors.Is(err, zkcoord.ErrNoNode):
		return Version{}, fmt.Errorf("%w: %s", ErrNotFound, n.path)
	case errors.Is(err, zkcoord.ErrBadVersion):
		return Version{}, fmt.Errorf("%w: %s is no longer at version %d", ErrConflict, n.path, version)
	}
	lostReply(err)
	if version == AnyVersion && zkcoord.IsRetryable(err) {
		return Version{}, fmt.Errorf("config: set %s: %w", n.path, err) // idempotent
	}
	found, serr := zkcoord.Settle(ctx, n.sess, zkcoord.Write{Kind: zkcoord.WriteSet, Path: n.path, Data: data, Version: version, Czxid: at.czxid}, err)
	switch {
	case serr != nil:
		return Version{}, fmt.Errorf("config: set %s: %w", n.path, serr)
	case found.Stat.Version == version:
		return Version{}, fmt.Errorf("config: set %s: %w", n.path, err) // not written: again
	}
	return Version{}, fmt.Errorf("%w: %s is no longer at version %d", ErrConflict, n.path, version)
}

// Update runs a read-modify-write loop: it reads the current version
// (Exists false if there is none), asks fn for the new data, and writes it
// with compare-and-set, creating the node if needed. On a conflict it reads
// again and calls fn again. An error from fn stops the loop and is returned
// as is.
func (n *Node) Update(ctx context.Context, fn func(cur Version) ([]byte, error)) (Version, error) {
	for {
		cur, err := n.Get(ctx)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Version{}, err
		}
		data, err := fn(cur)
		if err != nil {
			return Version{}, err
		}
		var next Version
		if cur.Exists {
			next, err = n.setAt(ctx, data, cur)
		} else {
			next, err = n.Create(ctx, data)
		}
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrExists) || errors.Is(err, ErrNotFound) {
			continue
		}
		return next, err
	}
}

// Delete deletes the node if it is at version (AnyVersion: whatever it
// is). Deleting a node that does not exist does nothing.
//
// Delete reads the node first, to know which node it deletes: a delete
// whose reply is lost is settled by that node (see
// zkcoord.Settle), so that it never deletes a node created again
// at the same path meanwhile. It fails with an error wrapping
// zkcoord.ErrOutcomeUnknown if its ctx ends with the delete in flight.
func (n *Node) Delete(ctx context.Context, version int32) error {
	var czxid int64 // of the node meant
	return n.sess.Retry(ctx, func(ctx context.Context) error {
		ok, st, err := n.sess.Exists(ctx, n.path)
		switch {
		case err != nil:
			return fmt.Errorf("config: delete %s: %w", n.path, err)
		case !ok, czxid != 0 && st.Czxid != czxid:
			return nil // the node meant is gone
		case version != AnyVersion && st.Version != version:
			return fmt.Errorf("%w: %s is no longer at version %d", ErrConflict, n.path, version)
		}
		czxid = st.Czxid
		return n.delete(ctx, version, czxid)
	})
}

// delete makes one attempt at deleting the node whose czxid is czxid. It
// returns a retryable error when the delete may be sent again.
func (n *Node) delete(ctx context.Context, version int32, czxid int64) error {
	if err := ctx.Err(); err != nil {
		return err // not sent
	}
	err := n.sess.Delete(ctx, n.path, version)
	switch {
	case err == nil, errors.Is(err, zkcoord.ErrNoNode):
		return nil
	case errors.Is(err, zkcoord.ErrBadVersion):
		return fmt.Errorf("%w: %s is no longer at version %d", ErrConflict, n.path, version)
	}
	lostReply(err)
	found, serr := zkcoord.Settle(ctx, n.sess, zkcoord.Write{Kind: zkcoord.WriteDelete, Path: n.path, Version: version, Czxid: czxid}, err)
	switch {
	case serr != nil:
		return fmt.Errorf("config: delete %s: %w", n.path, serr)
	case found.Done:
		return nil // the node meant is gone
	}
	return fmt.Errorf("config: delete %s: %w", n.path, err) // look again, send again
}
