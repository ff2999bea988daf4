package rebalance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// WithWeight sets this client's weight (its capacity), from 1 to
// alloc.MaxWeight: the coordinator gives each client a share of the
// resources in proportion to its weight (see alloc.WeightedSticky). The
// weight is written into the client node's data when the client joins and
// holds for that membership; members that do not advertise one, such as
// those of older versions, weigh 1. Default 1.
func WithWeight(w int64) Option { return func(o *options) { o.weight = w } }

// WithResourceWeights makes f give each resource its weight (its cost),
// from 1 to alloc.MaxWeight (values outside count as the nearest bound):
// a client's load is the total weight of its resources. The coordinator
// calls f at each rebalancing, for every resource, so f must be quick and
// deterministic; give every member of the group the same f, since any of
// them may become coordinator. A panic in f refuses the allocation (see
// ErrAllocationRefused). Without it every resource weighs 1.
func WithResourceWeights(f func(resource string) int64) Option {
	return func(o *options) { o.resourceWeights = f }
}

// weightCache remembers the weights of client nodes: a client node's data
// is written once, when it is created, so each is read once per
// coordinator. Rebalancings run one at a time; the mutex only makes that
// explicit.
type weightCache struct {
	mu sync.Mutex
	w  map[string]int64 // by node name
}

// weights returns the weights of the clients that do not weigh 1, by
// client id, reading the data of the nodes it has not seen. A node that is
// gone meanwhile, or whose data says nothing valid, weighs 1.
func (wc *weightCache) weights(ctx context.Context, sess *zkcoord.Session, lay layout, ms []memberNode) (alloc.Weights, error) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.w == nil {
		wc.w = map[string]int64{}
	}
	var unknown []memberNode
	for _, m := range ms {
		if _, ok := wc.w[m.node]; !ok {
			unknown = append(unknown, m)
		}
	}
	read := make([]int64, len(unknown))
	errs := make([]error, len(unknown))
	fs := make([]func(), len(unknown))
	for i, m := range unknown {
		fs[i] = func() {
			data, _, err := sess.Get(ctx, lay.client(m.node))
			switch {
			case errors.Is(err, zkcoord.ErrNoNode):
				read[i] = 0 // left: weighs 1, not remembered
			case err != nil:
				errs[i] = err
			default:
				read[i] = memberWeight(data)
			}
		}
	}
	if len(fs) > 0 {
		elect.Parallel(fs...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, m := range unknown {
		if read[i] > 0 {
			wc.w[m.node] = read[i]
		}
	}
	// Forget the nodes that are gone.
	live := make(map[string]bool, len(ms))
	out := alloc.Weights{}
	for _, m := range ms {
		live[m.node] = true
		if w := wc.w[m.node]; w > 1 {
			out[m.id] = w
		}
	}
	for n := range wc.w {
		if !live[n] {
			delete(wc.w, n)
		}
	}
	return out, nil
}

// memberWeight reads the weight a client node's data advertises: 1 when
// there is none or it is not valid.
func memberWeight(data []byte) int64 {
	var ci clientInfo
	if json.Unmarshal(data, &ci) != nil || ci.Weight < 1 || ci.Weight > alloc.MaxWeight {
		return 1
	}
	return ci.Weight
}

// resourceWeights calls the WithResourceWeights function for every
// resource; nil without one.
func (r *role) resourceWeights(resources []string) (w alloc.Weights, err error) {
	f := r.opts.resourceWeights
	if f == nil {
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			w, err = nil, fmt.Errorf("%w: resource weight function panicked: %v", ErrAllocationRefused, p)
		}
	}()
	w = make(alloc.Weights, len(resources))
	for _, res := range resources {
		if v := f(res); v != 1 {
			w[res] = v
		}
	}
	return w, nil
}
