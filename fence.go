package zkcoord

import (
	"context"
	"errors"
	"fmt"
)

// Fence proves ownership of a node, such as a lock's or a leader's node.
//
// Token is the node's creation zxid (czxid). ZooKeeper orders every write
// in one global sequence, so a later owner of the same thing always has a
// larger token: a resource that remembers the largest token it has seen can
// reject a stale owner, such as a process that paused past the end of its
// session. Pass Token to the resource along with each use. For lock and
// election nodes, see also docs/protocol.md#sequence-numbers-and-their-wrap.
type Fence struct {
	Path    string
	Token   int64
	Version int32
	// Unique says that the node's name is never reused: it came from a
	// sequential create (a lock's or a leader's node), so no other node
	// can ever have this path, and the transaction's version check alone
	// proves ownership. GuardedMulti then skips its read, saving a round
	// trip. Leave it false for fixed names.
	Unique bool
}

// Check returns the operation that fails a transaction unless the fenced
// node is still there at the fenced version: put it into a transaction of
// your own (Multi) to make every write of it conditional on ownership, as
// GuardedMulti does. Exact for a unique fence (a lock's or a leader's
// node); for a fixed name it cannot tell the node from one re-created at
// the same version, which GuardedMulti's read catches.
func (f Fence) Check() Op { return CheckOp(f.Path, f.Version) }

// FenceOf reads the fence of a node this Session owns. A node that is
// ephemeral but owned by another session gives ErrNotOwner.
func (s *Session) FenceOf(ctx context.Context, path string) (Fence, error) {
	ok, st, err := s.Exists(ctx, path)
	if err != nil {
		return Fence{}, err
	}
	if !ok {
		return Fence{}, fmt.Errorf("%w: %s does not exist", ErrNotOwner, path)
	}
	if st.EphemeralOwner != 0 && st.EphemeralOwner != s.ID() {
		return Fence{}, fmt.Errorf("%w: %s belongs to session 0x%x", ErrNotOwner, path, st.EphemeralOwner)
	}
	return Fence{Path: path, Token: st.Czxid, Version: st.Version}, nil
}

// GuardedMulti runs ops atomically, only if the fence's node is still the
// one fenced (same creation zxid, Token) at the fenced version. Otherwise
// nothing is written and the error wraps ErrNotOwner.
//
// A transaction can check a node's path and version only, and a node
// deleted and re-created under the same name (by another session, or by
// another owner of a fixed-name node such as a barrier) starts again at
// version 0, so a version check alone would accept a stale owner's write
// to its successor's node. GuardedMulti therefore first reads the node and
// refuses if its creation zxid is not the fence's Token, then runs ops in a
// transaction that checks the version. A stale owner, the case fencing
// exists for, finds the successor's node long created, and is refused by
// the read. The one case neither step catches is a deletion and re-creation
// that reaches the fenced version in the round trip between the read and
// the transaction: a successor that takes over within that round trip
// while this owner still writes. Nodes with unique names (sequential
// nodes: locks, leaders; Fence.Unique) are exact whatever happens, since a
// re-created node would need the same sequence number, and for them the
// read is skipped: one round trip.
func (s *Session) GuardedMulti(ctx context.Context, f Fence, ops ...Op) ([]MultiResponse, error) {
	if !f.Unique {
		ok, st, err := s.Exists(ctx, f.Path)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, fmt.Errorf("%w: %s is gone", ErrNotOwner, f.Path)
		case st.Czxid != f.Token:
			return nil, fmt.Errorf("%w: %s was re-created (token %d, fenced %d)", ErrNotOwner, f.Path, st.Czxid, f.Token)
		}
	}
	all := append([]Op{f.Check()}, ops...)
	res, err := s.Multi(ctx, all...)
	if err != nil && len(res) > 0 && res[0].Error != nil &&
		(errors.Is(res[0].Error, ErrNoNode) || errors.Is(res[0].Error, ErrBadVersion)) {
		return nil, fmt.Errorf("%w: %s is gone or changed: %v", ErrNotOwner, f.Path, res[0].Error)
	}
	if err != nil {
		return nil, err
	}
	return res[1:], nil
}

// GuardedSet writes data to path only while the fence holds.
func (s *Session) GuardedSet(ctx context.Context, f Fence, path string, data []byte, version int32) (*Stat, error) {
	res, err := s.GuardedMulti(ctx, f, SetOp(path, data, version))
	if err != nil {
		return nil, err
	}
	return res[0].Stat, nil
}
