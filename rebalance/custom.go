package rebalance

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// ErrAllocationRefused is reported when the coordinator refuses the
// allocation it computed: the WithAllocator function failed, panicked or
// returned an assignment that does not give every resource to exactly one
// live client (the error wraps alloc.ErrInvalid then, and says what is
// wrong), or the WithResourceWeights function panicked. Nothing is
// written: the allocation in force stays, and nobody moves, until the
// next change of the group's clients or resources brings a new attempt.
// The coordinator logs it (at level Error) and its Client.AllocationError
// returns it.
var ErrAllocationRefused = errors.New("rebalance: allocation refused")

// WithAllocator makes the coordinator allocate with f instead of
// alloc.WeightedSticky (alloc.Sticky without weights): f gets the
// allocation in force, the live clients, the resources and their weights,
// and returns who owns what. It need not be balanced, but it must give
// every resource to exactly one of the clients given, and list nothing
// else: a result that does not is refused before anything moves (see
// ErrAllocationRefused). In the incremental mode only the resources whose
// owner changes move, so an f that keeps owners where it can keeps the
// group still. f runs on the coordinator, once per rebalancing; give every
// member of the group the same f, since any of them may become
// coordinator.
func WithAllocator(f alloc.Func) Option { return func(o *options) { o.allocator = f } }

// allocate computes the next allocation of the group g: sticky (starting
// from the allocation in force) in the incremental mode, from scratch in
// the others, by the WithAllocator function if there is one.
func (r *role) allocate(ctx context.Context, g groupState) (alloc.Assignment, error) {
	ids := clientIDs(g.clients)
	cw, err := r.weights.weights(ctx, r.sess, r.lay, g.clients)
	if err != nil {
		return nil, noNodeInconsistent(err)
	}
	rw, err := r.resourceWeights(g.resources)
	if err != nil {
		return nil, err
	}
	if f := r.opts.allocator; f != nil {
		next, err := alloc.Run(f, alloc.Input{Prev: g.record.Assignment, Clients: ids, Resources: g.resources,
			ClientWeights: cw, ResourceWeights: rw})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrAllocationRefused, err)
		}
		return next, nil
	}
	var prev alloc.Assignment
	if r.opts.mode == Incremental {
		prev = g.record.Assignment
	}
	return alloc.WeightedSticky(prev, ids, cw, g.resources, rw), nil
}

// AllocationError returns why this client, while it is the coordinator,
// refused the latest allocation it computed (an error wrapping
// ErrAllocationRefused): the allocation in force stays until the next
// change of the group's clients or resources. It is nil once the client
// writes an allocation or stops being the coordinator, and on other
// clients.
func (c *Client) AllocationError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.allocErr
}

func (c *Client) setAllocationError(err error) {
	c.mu.Lock()
	c.allocErr = err
	c.mu.Unlock()
}
