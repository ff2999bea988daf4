package rebalance

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zkcoord/zkcoord"
)

// AddResource registers resource id in the group at path (creating the
// group's nodes if needed). The coordinator notices and rebalances. A
// resource that is already registered gives an error wrapping
// ErrResourceExists.
//
// A create whose reply is lost is settled by zkcoord.Settle: no
// resource node means it did not happen, and it is sent again. A resource
// node found then is no proof that this call created it (another operator
// may have added the same resource meanwhile): AddResource fails with an
// error wrapping both ErrResourceExists (the resource is registered) and
// zkcoord.ErrOutcomeUnknown (by this call or another). An error wrapping
// ErrOutcomeUnknown alone means the outcome could not be read: ctx or the
// Session ended with the create in flight.
//
// Once it has added the resource, AddResource writes its handover mark
// (see WithLockDelay) as released, unless a mark is there already, so that
// the first takeover of a new resource does not wait; an error then says
// that the resource was added but not the mark.
func AddResource(ctx context.Context, sess *zkcoord.Session, path, id string) error {
	lay, err := resourceLayout(path, id)
	if err != nil {
		return err
	}
	if err := lay.ensure(ctx, sess); err != nil {
		return fmt.Errorf("rebalance: create group %s: %w", lay.base, err)
	}
	node := lay.resource(id)
	added := func() error {
		if err := markNew(ctx, sess, lay.handover(id)); err != nil {
			return fmt.Errorf("rebalance: %s added to %s, but not its handover mark (its first takeover waits any lock-delay): %w", id, lay.base, err)
		}
		return nil
	}
	for {
		_, err := sess.Create(ctx, node, nil, zkcoord.FlagPersistent)
		switch {
		case err == nil:
			return added()
		case errors.Is(err, zkcoord.ErrNodeExists):
			return fmt.Errorf("%w: %s in %s", ErrResourceExists, id, lay.base)
		}
		lostReply(err)
		found, serr := zkcoord.Settle(ctx, sess, zkcoord.Write{Kind: zkcoord.WriteCreate, Path: node, Data: []byte{}, Flags: zkcoord.FlagPersistent}, err)
		switch {
		case serr != nil && found.Stat != nil:
			return fmt.Errorf("%w: %s in %s, by this call or another: %w", ErrResourceExists, id, lay.base, serr)
		case serr != nil:
			return fmt.Errorf("rebalance: add %s in %s: %w", id, lay.base, serr)
		case found.Done:
			return added()
		case found.Stat != nil:
			// Another operator's resource node, with data of its own.
			return fmt.Errorf("%w: %s in %s", ErrResourceExists, id, lay.base)
		}
		// Not created: send it again.
	}
}

// resourceLayout checks a group path and a resource id given by an
// operator, and returns the group's layout.
func resourceLayout(path, id string) (layout, error) {
	lay, err := newLayout(path)
	if err != nil {
		return layout{}, err
	}
	return lay, validResource(id)
}

// RemoveResource unregisters resource id. Its current owner stops it after
// the next rebalancing and then deletes the resource's barrier; the barrier
// is never deleted here, so the resource stays protected until its owner
// has really stopped. An unknown resource gives an error wrapping
// ErrNoResource.
//
// RemoveResource reads the resource node first and deletes only that node
// (by its czxid): a delete whose reply is lost is settled by
// zkcoord.Settle, and never sent again once that node is gone, so a
// resource added again meanwhile stays. Once the resource it found is gone
// RemoveResource returns nil, also when a concurrent RemoveResource removed
// it. It fails with an error wrapping zkcoord.ErrOutcomeUnknown when ctx or
// the Session ends with the delete in flight.
//
// Once the resource is gone, RemoveResource deletes its handover mark (see
// WithLockDelay) if it says released; one that says held is left to the
// owner's release, or kept if the barrier vanished without one. An error
// then says that the resource was removed but the mark is left.
func RemoveResource(ctx context.Context, sess *zkcoord.Session, path, id string) error {
	lay, err := resourceLayout(path, id)
	if err != nil {
		return err
	}
	node := lay.resource(id)
	var czxid int64 // of the resource node meant; 0 until read
	err = sess.Retry(ctx, func(ctx context.Context) error {
		ok, st, err := sess.Exists(ctx, node)
		switch {
		case err != nil:
			return err
		case !ok && czxid == 0:
			return fmt.Errorf("%w: %s in %s", ErrNoResource, id, lay.base)
		case !ok, czxid != 0 && st.Czxid != czxid:
			return nil // the resource meant is gone
		}
		czxid = st.Czxid
		err = sess.Delete(ctx, node, -1)
		if err == nil || errors.Is(err, zkcoord.ErrNoNode) {
			return nil
		}
		lostReply(err)
		found, serr := zkcoord.Settle(ctx, sess, zkcoord.Write{Kind: zkcoord.WriteDelete, Path: node, Version: -1, Czxid: czxid}, err)
		switch {
		case serr != nil:
			return fmt.Errorf("rebalance: remove %s in %s: %w", id, lay.base, serr)
		case found.Done:
			return nil
		}
		return err // still there: look again, send again
	})
	if err != nil {
		return err
	}
	if err := forgetMark(ctx, sess, lay.handover(id)); err != nil {
		return fmt.Errorf("rebalance: %s removed from %s, but its handover mark %s is left: %w", id, lay.base, lay.handover(id), err)
	}
	return nil
}

// testHookOutcomeUnknown, if set, runs when an operator's write fails with
// a connection loss, before its outcome is settled.
var testHookOutcomeUnknown func()

// lostReply runs the test hook if err is a connection loss.
func lostReply(err error) {
	if zkcoord.IsRetryable(err) && testHookOutcomeUnknown != nil {
		testHookOutcomeUnknown()
	}
}

// ListResources returns the registered resources of the group, sorted. A
// group that does not exist has none.
func ListResources(ctx context.Context, sess *zkcoord.Session, path string) ([]string, error) {
	lay, err := newLayout(path)
	if err != nil {
		return nil, err
	}
	kids, _, err := sess.Children(ctx, lay.resources())
	if errors.Is(err, zkcoord.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := parseResources(kids)
	slices.Sort(out)
	return out, nil
}
