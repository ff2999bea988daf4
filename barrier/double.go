package barrier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Errors of DoubleBarrier.
var (
	// ErrMembers: a double barrier needs at least one member.
	ErrMembers = errors.New("barrier: member count must be at least 1")
	// ErrMemberGone: this member's node vanished while it was still in the
	// barrier (its Session ended, or something deleted it).
	ErrMemberGone = errors.New("barrier: member node is gone")
)

// readyNode is created by the member that completes the group.
const readyNode = "ready"

// DoubleBarrier is one member of a double barrier with a fixed number of
// members. Enter and Leave must not be called concurrently.
type DoubleBarrier struct {
	sess    *zkcoord.Session
	path    string
	members int
	id      string
}

// NewDouble returns a new member of the double barrier at path, which
// completes when members members have entered. It does no I/O.
func NewDouble(sess *zkcoord.Session, path string, members int) (*DoubleBarrier, error) {
	if err := validate(sess, path); err != nil {
		return nil, err
	}
	if members < 1 {
		return nil, fmt.Errorf("%w: got %d", ErrMembers, members)
	}
	return &DoubleBarrier{sess: sess, path: path, members: members, id: uuid.NewString()}, nil
}

// ID returns the name of this member's node: a random UUID.
func (d *DoubleBarrier) ID() string { return d.id }

// Path returns the barrier's path.
func (d *DoubleBarrier) Path() string { return d.path }

func (d *DoubleBarrier) node() string  { return zkcoord.Join(d.path, d.id) }
func (d *DoubleBarrier) ready() string { return zkcoord.Join(d.path, readyNode) }

// Enter joins the barrier and blocks until the group is complete: until as
// many members as NewDouble was given have entered. As in Curator, a
// "ready" node left by a group whose members have not all left yet lets a
// newcomer through at once.
//
// If Enter fails (ctx or the Session ended), this member's node is removed
// again, so the member does not hold up the others in Leave.
func (d *DoubleBarrier) Enter(ctx context.Context) (err error) {
	ready, _, w, err := d.sess.ExistsW(ctx, d.ready())
	if err != nil {
		return fmt.Errorf("barrier: enter %s: %w", d.path, err)
	}
	if err := d.createMember(ctx); err != nil {
		return fmt.Errorf("barrier: enter %s: %w", d.path, err)
	}
	defer func() {
		if err != nil {
			d.removeMember(ctx)
			err = fmt.Errorf("barrier: enter %s: %w", d.path, err)
		}
	}()
	for !ready {
		n, err := d.count(ctx)
		if err != nil {
			return err
		}
		if n >= d.members {
			return d.createReady(ctx)
		}
		if _, err := recipe.WaitEvent(ctx, d.sess, w); err != nil {
			return err
		}
		ready, _, w, err = d.sess.ExistsW(ctx, d.ready())
		if err != nil {
			return err
		}
	}
	return nil
}

// createMember creates this member's ephemeral node, creating the barrier
// path as a container if needed.
func (d *DoubleBarrier) createMember(ctx context.Context) error {
	return d.sess.Retry(ctx, func(ctx context.Context) error {
		for {
			_, err := d.sess.Create(ctx, d.node(), nil, zkcoord.FlagEphemeral)
			switch {
			case errors.Is(err, zkcoord.ErrNoNode):
				if err := d.sess.EnsureContainers(ctx, d.path); err != nil {
					return err
				}
				continue
			case errors.Is(err, zkcoord.ErrNodeExists):
				// An earlier attempt whose reply was lost, or an earlier
				// Enter: the node is ours if our session owns it.
				_, st, err := d.sess.Exists(ctx, d.node())
				if err != nil {
					return err
				}
				if st == nil || st.EphemeralOwner != d.sess.ID() {
					return fmt.Errorf("barrier: member node %s belongs to another session", d.node())
				}
				return nil
			}
			return err
		}
	})
}

func (d *DoubleBarrier) createReady(ctx context.Context) error {
	return d.sess.Retry(ctx, func(ctx context.Context) error {
		_, err := d.sess.Create(ctx, d.ready(), nil, zkcoord.FlagPersistent)
		if errors.Is(err, zkcoord.ErrNodeExists) {
			return nil
		}
		return err
	})
}

// count returns the number of members under the barrier path.
func (d *DoubleBarrier) count(ctx context.Context) (int, error) {
	m, err := d.list(ctx)
	return len(m), err
}

// list returns the sorted member names: UUID-named children. "ready" and
// foreign children are left out.
func (d *DoubleBarrier) list(ctx context.Context) ([]string, error) {
	children, _, err := d.sess.Children(ctx, d.path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	members := children[:0]
	for _, c := range children {
		if isMember(c) {
			members = append(members, c)
		}
	}
	slices.Sort(members)
	return members, nil
}

// isMember reports whether a child name is a member node: a UUID in its
// canonical 36-character form, which is what both Curator and this package
// create.
func isMember(name string) bool {
	if len(name) != 36 {
		return false
	}
	_, err := uuid.Parse(name)
	return err == nil
}

// Leave leaves the barrier and blocks until every member has left.
//
// It follows Curator's algorithm: members are ordered by name; the lowest
// member waits for the highest to go, every other member deletes its own
// node and waits for the lowest to go, until only the lowest is left,
// which then deletes itself. The last member out deletes "ready". One
// difference: if the lowest member's session ends while others are still
// in, Curator lets the members that have already deleted their nodes
// return at once; Leave waits until the remaining members have left too.
//
// If Leave fails (ctx or the Session ended), this member's node is removed
// if it still exists.
func (d *DoubleBarrier) Leave(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			d.removeMember(ctx)
			err = fmt.Errorf("barrier: leave %s: %w", d.path, err)
		}
	}()
	ours := true // whether our node should still exist
	for {
		members, err := d.list(ctx)
		if err != nil {
			return err
		}
		if len(members) == 0 {
			break
		}
		i := slices.Index(members, d.id)
		if i < 0 && ours {
			if err := d.sess.Err(); err != nil {
				return err
			}
			return ErrMemberGone
		}
		if len(members) == 1 && i == 0 {
			if err := d.deleteMember(ctx); err != nil {
				return err
			}
			break
		}
		// The lowest member watches the highest; everyone else leaves and
		// watches the lowest. A single member left that is not us is the
		// lowest: normally it leaves last, but if the lowest member's
		// session ended, the one left is still in and we wait for it.
		watch := members[0]
		if i == 0 {
			watch = members[len(members)-1]
		}
		// GetW rather than ExistsW: a node that is already gone leaves no
		// watch behind, and we simply look again.
		_, _, w, err := d.sess.GetW(ctx, zkcoord.Join(d.path, watch))
		gone := errors.Is(err, zkcoord.ErrNoNode)
		if err != nil && !gone {
			return err
		}
		if i != 0 && ours {
			if err := d.deleteMember(ctx); err != nil {
				return err
			}
			ours = false
		}
		if !gone {
			if _, err := recipe.WaitEvent(ctx, d.sess, w); err != nil {
				return err
			}
		}
	}
	err = recipe.EnsureDeleted(ctx, d.sess, d.ready())
	return err
}

// deleteMember deletes this member's node; a node already gone is fine.
func (d *DoubleBarrier) deleteMember(ctx context.Context) error {
	return recipe.EnsureDeleted(ctx, d.sess, d.node())
}

// removeMember deletes this member's node after a failure, best effort,
// even when ctx has ended (bounded by the session timeout).
func (d *DoubleBarrier) removeMember(ctx context.Context) {
	if d.sess.Err() != nil {
		return // the server removes ephemeral nodes of an ended session
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(d.sess.Timeout(), time.Second))
	defer cancel()
	if err := d.deleteMember(ctx); err != nil {
		d.sess.Logger().Warn("barrier: could not remove member node", "path", d.node(), "err", err)
	}
}
