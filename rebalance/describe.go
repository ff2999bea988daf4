package rebalance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// Description is a snapshot of a group, for operators and the CLI. It is
// assembled from several reads, so it may mix moments of a group that is
// changing.
type Description struct {
	Root  string `json:"root"`
	Group string `json:"group"`
	Path  string `json:"path"`
	// Members are the registered clients in election order; the first is
	// the coordinator.
	Members     []MemberInfo `json:"members"`
	Coordinator string       `json:"coordinator,omitempty"`
	// Term is the version of the term node: it grows with every new
	// coordinator.
	Term int64 `json:"term"`
	// TermHolder is the client that wrote the current term.
	TermHolder string `json:"term_holder,omitempty"`
	// Generation and AllocationTerm come from the allocation record.
	Generation     int64               `json:"generation"`
	AllocationTerm int64               `json:"allocation_term"`
	Allocation     map[string][]string `json:"allocation"`
	Resources      []string            `json:"resources"`
	Barriers       []BarrierHolder     `json:"barriers"`
	// Status is set in groups that use the global-barrier mode.
	Status *GlobalStatus `json:"status,omitempty"`
	// Rebalancing is true, in a group with members, while the allocation
	// does not match the members and resources, or some resource is not
	// (yet) held by its allocated owner, or a global-barrier rebalancing
	// has not been confirmed.
	Rebalancing bool `json:"rebalancing"`
	// Pending lists the resources whose barrier is not held by their
	// allocated owner.
	Pending []Move `json:"pending,omitempty"`
	// Unallocated lists registered resources the allocation does not give
	// to anyone.
	Unallocated []string `json:"unallocated,omitempty"`
	// AllocationError is set when the allocation data cannot be read.
	AllocationError string `json:"allocation_error,omitempty"`
}

// MemberInfo describes one client.
type MemberInfo struct {
	ID          string   `json:"id"`
	Node        string   `json:"node"`
	Session     string   `json:"session"`
	Name        string   `json:"name,omitempty"`
	Host        string   `json:"host,omitempty"`
	PID         int      `json:"pid,omitempty"`
	Mode        string   `json:"mode,omitempty"`
	Weight      int64    `json:"weight"`
	Coordinator bool     `json:"coordinator"`
	Allocated   []string `json:"allocated"`
	Holding     []string `json:"holding"`
}

// BarrierHolder describes one resource barrier.
type BarrierHolder struct {
	Resource   string `json:"resource"`
	Client     string `json:"client"`
	Token      int64  `json:"token"`
	Session    string `json:"session"`
	Generation int64  `json:"generation"`
}

// Move is a resource on its way from one client (From, "" if nobody holds
// its barrier) to its allocated owner (To).
type Move struct {
	Resource string `json:"resource"`
	From     string `json:"from,omitempty"`
	To       string `json:"to"`
}

// GlobalStatus is the state of the global-barrier protocol.
type GlobalStatus struct {
	Phase      string   `json:"phase"`
	Generation int64    `json:"generation"`
	Term       int64    `json:"term"`
	CheckedIn  []string `json:"checked_in,omitempty"`
}

// Describe reads the state of a group. A group that does not exist gives
// an error wrapping ErrNoGroup. Unreadable allocation data is reported in
// AllocationError and as an error wrapping alloc.ErrCorrupt, together with
// everything else that could be read.
func Describe(ctx context.Context, sess *zkcoord.Session, path string) (*Description, error) {
	lay, err := newLayout(path)
	if err != nil {
		return nil, err
	}
	if ok, _, err := sess.Exists(ctx, lay.base); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoGroup, lay.base)
	}
	ds := &describer{sess: sess, lay: lay, index: map[string]int{}, holder: map[string]string{},
		d: &Description{Root: lay.root, Group: lay.group, Path: lay.base, Allocation: map[string][]string{},
			Members: []MemberInfo{}, Resources: []string{}, Barriers: []BarrierHolder{}}}
	for _, step := range []func(context.Context) error{
		ds.members, ds.term, ds.allocation, ds.barriers, ds.status,
	} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	ds.progress()
	return ds.d, ds.allocErr
}

// describer assembles a Description, one step per part of the group.
type describer struct {
	sess     *zkcoord.Session
	lay      layout
	d        *Description
	index    map[string]int    // member id -> index in d.Members
	holder   map[string]string // resource -> client holding its barrier
	rec      alloc.Record
	allocErr error
}

// members reads the client nodes, in election order.
func (ds *describer) members(ctx context.Context) error {
	kids, _, err := ds.sess.Children(ctx, ds.lay.clients())
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return err
	}
	for _, m := range parseClients(kids) {
		info := MemberInfo{ID: m.id, Node: m.node, Allocated: []string{}, Holding: []string{}}
		data, st, err := ds.sess.Get(ctx, ds.lay.client(m.node))
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue // left meanwhile
		}
		if err != nil {
			return err
		}
		var ci clientInfo
		if json.Unmarshal(data, &ci) == nil {
			info.Name, info.Host, info.PID, info.Mode = ci.Name, ci.Host, ci.PID, ci.Mode
		}
		info.Weight = memberWeight(data)
		info.Session = fmt.Sprintf("0x%x", st.EphemeralOwner)
		ds.index[m.id] = len(ds.d.Members)
		ds.d.Members = append(ds.d.Members, info)
	}
	if len(ds.d.Members) > 0 {
		ds.d.Members[0].Coordinator = true
		ds.d.Coordinator = ds.d.Members[0].ID
	}
	return nil
}

// term reads the term node.
func (ds *describer) term(ctx context.Context) error {
	data, st, err := ds.sess.Get(ctx, ds.lay.term())
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil
	} else if err != nil {
		return err
	}
	ds.d.Term = int64(st.Version)
	var ti termInfo
	if json.Unmarshal(data, &ti) == nil {
		ds.d.TermHolder = ti.Coordinator
	}
	return nil
}

// allocation reads the resources and the allocation record; unreadable
// allocation data is kept in allocErr, not failed on.
func (ds *describer) allocation(ctx context.Context) error {
	d := ds.d
	res, _, err := ds.sess.Children(ctx, ds.lay.resources())
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return err
	}
	d.Resources = parseResources(res)
	if data, _, err := ds.sess.Get(ctx, ds.lay.resources()); err == nil {
		ds.rec, ds.allocErr = alloc.Decode(data)
		if ds.allocErr != nil {
			ds.allocErr = fmt.Errorf("rebalance: allocation in %s: %w", ds.lay.resources(), ds.allocErr)
			d.AllocationError = ds.allocErr.Error()
		}
	} else if !errors.Is(err, zkcoord.ErrNoNode) {
		return err
	}
	d.Generation, d.AllocationTerm = ds.rec.Generation, ds.rec.Term
	for c, rs := range ds.rec.Assignment {
		d.Allocation[c] = append([]string{}, rs...)
		if i, ok := ds.index[c]; ok {
			d.Members[i].Allocated = append([]string{}, rs...)
		}
	}
	return nil
}

// barriers reads the resource barriers and who holds them.
func (ds *describer) barriers(ctx context.Context) error {
	bars, _, err := ds.sess.Children(ctx, ds.lay.barriers())
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return err
	}
	slices.Sort(bars)
	for _, b := range bars {
		data, st, err := ds.sess.Get(ctx, ds.lay.barrier(b))
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		var bi barrierInfo
		_ = json.Unmarshal(data, &bi) // foreign data: the holder stays unknown
		ds.d.Barriers = append(ds.d.Barriers, BarrierHolder{Resource: b, Client: bi.Client, Token: st.Czxid,
			Session: fmt.Sprintf("0x%x", st.EphemeralOwner), Generation: bi.Generation})
		ds.holder[b] = bi.Client
		if i, ok := ds.index[bi.Client]; ok {
			ds.d.Members[i].Holding = append(ds.d.Members[i].Holding, b)
		}
	}
	return nil
}

// status reads the global-barrier status and check-ins, if any.
func (ds *describer) status(ctx context.Context) error {
	data, _, err := ds.sess.Get(ctx, ds.lay.status())
	if err != nil {
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil
		}
		return err
	}
	if len(data) == 0 {
		return nil
	}
	st, err := decodeStatus(data)
	if err != nil {
		return err
	}
	gs := &GlobalStatus{Phase: st.Phase, Generation: st.Generation, Term: st.Term}
	if kids, _, err := ds.sess.Children(ctx, ds.lay.stopped()); err == nil {
		for _, k := range kids {
			if id, g, ok := parseCheckIn(k); ok && g == st.Generation {
				gs.CheckedIn = append(gs.CheckedIn, id)
			}
		}
		slices.Sort(gs.CheckedIn)
	}
	ds.d.Status = gs
	return nil
}

// progress derives what is still moving from what was read.
func (ds *describer) progress() {
	d := ds.d
	owners := ds.rec.Assignment.Owners()
	for _, r := range d.Resources {
		to, ok := owners[r]
		if !ok {
			d.Unallocated = append(d.Unallocated, r)
			continue
		}
		if ds.holder[r] != to {
			d.Pending = append(d.Pending, Move{Resource: r, From: ds.holder[r], To: to})
		}
	}
	ids := make([]string, len(d.Members))
	for i, m := range d.Members {
		ids[i] = m.ID
	}
	// Without members nobody can move anything: the group is idle, not
	// rebalancing, whatever the last allocation says. The allocation
	// matches the group when it gives every resource to exactly one member,
	// whatever the shares: they depend on weights, or on the group's own
	// allocation function.
	d.Rebalancing = ds.allocErr == nil && len(d.Members) > 0 && (!ds.rec.Assignment.Covers(ids, d.Resources) ||
		len(d.Pending) > 0 || (d.Status != nil && d.Status.Phase != PhaseStartConfirmed))
}
