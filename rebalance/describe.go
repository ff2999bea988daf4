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
	// Rebalancing is true while the allocation does not match the members
	// and resources, or some resource is not (yet) held by its allocated
	// owner, or a global-barrier rebalancing has not been confirmed.
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
func Describe(ctx context.Context, sess *zkcoord.Session, root, group string) (*Description, error) {
	lay, err := newLayout(root, group)
	if err != nil {
		return nil, err
	}
	d := &Description{Root: root, Group: group, Path: lay.base, Allocation: map[string][]string{},
		Members: []MemberInfo{}, Resources: []string{}, Barriers: []BarrierHolder{}}
	if ok, _, err := sess.Exists(ctx, lay.base); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoGroup, lay.base)
	}

	// Members, in election order.
	kids, _, err := sess.Children(ctx, lay.clients())
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, err
	}
	index := map[string]int{}
	for i, m := range parseClients(kids) {
		info := MemberInfo{ID: m.id, Node: m.node, Coordinator: i == 0, Allocated: []string{}, Holding: []string{}}
		data, st, err := sess.Get(ctx, lay.client(m.node))
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue // left meanwhile
		}
		if err != nil {
			return nil, err
		}
		var ci clientInfo
		if json.Unmarshal(data, &ci) == nil {
			info.Name, info.Host, info.PID, info.Mode = ci.Name, ci.Host, ci.PID, ci.Mode
		}
		info.Session = fmt.Sprintf("0x%x", st.EphemeralOwner)
		index[m.id] = len(d.Members)
		d.Members = append(d.Members, info)
	}
	if len(d.Members) > 0 {
		d.Members[0].Coordinator = true
		d.Coordinator = d.Members[0].ID
	}

	// Term.
	if data, st, err := sess.Get(ctx, lay.term()); err == nil {
		d.Term = int64(st.Version)
		var ti termInfo
		if json.Unmarshal(data, &ti) == nil {
			d.TermHolder = ti.Coordinator
		}
	} else if !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, err
	}

	// Resources and allocation.
	res, _, err := sess.Children(ctx, lay.resources())
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, err
	}
	d.Resources = parseResources(res)
	var rec alloc.Record
	var allocErr error
	if data, _, err := sess.Get(ctx, lay.resources()); err == nil {
		rec, allocErr = alloc.Decode(data)
		if allocErr != nil {
			allocErr = fmt.Errorf("rebalance: allocation in %s: %w", lay.resources(), allocErr)
			d.AllocationError = allocErr.Error()
		}
	} else if !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, err
	}
	d.Generation, d.AllocationTerm = rec.Generation, rec.Term
	for c, rs := range rec.Assignment {
		d.Allocation[c] = append([]string{}, rs...)
		if i, ok := index[c]; ok {
			d.Members[i].Allocated = append([]string{}, rs...)
		}
	}

	// Barriers.
	bars, _, err := sess.Children(ctx, lay.barriers())
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, err
	}
	slices.Sort(bars)
	holder := map[string]string{}
	for _, b := range bars {
		data, st, err := sess.Get(ctx, lay.barrier(b))
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var bi barrierInfo
		_ = json.Unmarshal(data, &bi) // foreign data: the holder stays unknown
		d.Barriers = append(d.Barriers, BarrierHolder{Resource: b, Client: bi.Client, Token: st.Czxid,
			Session: fmt.Sprintf("0x%x", st.EphemeralOwner), Generation: bi.Generation})
		holder[b] = bi.Client
		if i, ok := index[bi.Client]; ok {
			d.Members[i].Holding = append(d.Members[i].Holding, b)
		}
	}

	// Global-barrier status.
	if data, _, err := sess.Get(ctx, lay.status()); err == nil && len(data) > 0 {
		st, err := decodeStatus(data)
		if err != nil {
			return nil, err
		}
		gs := &GlobalStatus{Phase: st.Phase, Generation: st.Generation, Term: st.Term}
		if kids, _, err := sess.Children(ctx, lay.stopped()); err == nil {
			for _, k := range kids {
				if id, g, ok := parseCheckIn(k); ok && g == st.Generation {
					gs.CheckedIn = append(gs.CheckedIn, id)
				}
			}
			slices.Sort(gs.CheckedIn)
		}
		d.Status = gs
	} else if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, err
	}

	// Progress.
	owners := rec.Assignment.Owners()
	for _, r := range d.Resources {
		to, ok := owners[r]
		if !ok {
			d.Unallocated = append(d.Unallocated, r)
			continue
		}
		if holder[r] != to {
			d.Pending = append(d.Pending, Move{Resource: r, From: holder[r], To: to})
		}
	}
	ids := make([]string, len(d.Members))
	for i, m := range d.Members {
		ids[i] = m.ID
	}
	d.Rebalancing = allocErr == nil && (rec.Assignment.Check(ids, d.Resources) != nil ||
		len(d.Pending) > 0 || (d.Status != nil && d.Status.Phase != PhaseStartConfirmed))
	return d, allocErr
}
