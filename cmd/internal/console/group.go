package console

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/seq"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// readGroup reads a rebalancer group (the layout of rebalance/layout.go)
// from the store, which the caches keep current: ZooKeeper is read only
// for the nodes that changed. It agrees with rebalance.Describe, which
// reads everything every time.
func (m *model) readGroup(base string) (*GroupView, error) {
	kids, err := m.store.children(base)
	if err != nil {
		return nil, err
	}
	g := &GroupView{Root: zkcoord.Parent(base), Name: zkcoord.Base(base), Members: []Member{},
		Allocation: map[string][]string{}, Barriers: map[string]Barrier{}}

	// Members, in election order; the first coordinates.
	clients, err := m.store.childrenOpt(zkcoord.Join(base, "clients"))
	if err != nil {
		return nil, err
	}
	for _, c := range clientOrder(clients) {
		data, st, err := m.store.get(zkcoord.Join(base, "clients", c.node))
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		mb := Member{ID: c.id, Session: session(st)}
		var info struct {
			Name string `json:"name"`
			Host string `json:"host"`
			PID  int    `json:"pid"`
			Mode string `json:"mode"`
		}
		if json.Unmarshal(data, &info) == nil {
			mb.Name, mb.Host, mb.PID, mb.Mode = info.Name, info.Host, info.PID, info.Mode
		}
		g.Members = append(g.Members, mb)
	}
	if len(g.Members) > 0 {
		g.Members[0].Coordinator = true
		g.Coordinator, g.Mode = g.Members[0].ID, g.Members[0].Mode
	}

	if slices.Contains(kids, "term") {
		data, st, err := m.store.get(zkcoord.Join(base, "term"))
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, err
		}
		if err == nil {
			g.Term = int64(st.Version)
			var ti struct {
				Coordinator string `json:"coordinator"`
			}
			if json.Unmarshal(data, &ti) == nil {
				g.TermHolder = ti.Coordinator
			}
		}
	}

	// Resources and the allocation.
	res, err := m.store.childrenOpt(zkcoord.Join(base, "resources"))
	if err != nil {
		return nil, err
	}
	resources := make([]string, 0, len(res))
	for _, r := range res {
		if zkcoord.ValidateName(r) == nil && !zkcoord.IsProtected(r) {
			resources = append(resources, r)
		}
	}
	slices.Sort(resources)
	g.Resources = len(resources)
	var rec alloc.Record
	data, _, err := m.store.get(zkcoord.Join(base, "resources"))
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return nil, err
	}
	allocOK := true
	if err == nil {
		if rec, err = alloc.Decode(data); err != nil {
			g.AllocError, allocOK = err.Error(), false
		}
	}
	g.Generation = rec.Generation
	for c, rs := range rec.Assignment {
		g.Allocation[c] = rs
	}

	// Barriers.
	bars, err := m.store.childrenOpt(zkcoord.Join(base, "barriers"))
	if err != nil {
		return nil, err
	}
	for _, b := range bars {
		data, st, err := m.store.get(zkcoord.Join(base, "barriers", b))
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var bi struct {
			Client string `json:"client"`
		}
		_ = json.Unmarshal(data, &bi) // foreign data: the holder stays unknown
		g.Barriers[b] = Barrier{Client: bi.Client, Token: st.Czxid, Session: session(st)}
	}

	// The global-barrier mode's phase.
	confirmed := true
	if slices.Contains(kids, "status") {
		data, _, err := m.store.get(zkcoord.Join(base, "status"))
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, err
		}
		var st struct {
			Phase string `json:"phase"`
		}
		if err == nil && len(data) > 0 && json.Unmarshal(data, &st) == nil {
			g.Phase = st.Phase
			confirmed = st.Phase == rebalance.PhaseStartConfirmed
		}
	}

	// Progress: as rebalance.Describe judges it.
	owners := rec.Assignment.Owners()
	for _, r := range resources {
		to, ok := owners[r]
		if !ok {
			g.Unallocated = append(g.Unallocated, r)
			continue
		}
		if g.Barriers[r].Client != to {
			g.Pending++
		}
	}
	ids := make([]string, len(g.Members))
	for i, mb := range g.Members {
		ids[i] = mb.ID
	}
	g.Rebalancing = allocOK && (!rec.Assignment.Covers(ids, resources) || g.Pending > 0 || !confirmed)
	return g, nil
}

// clientNode is a rebalancer client node: _c_<uuid>-c_<sequence>.
type clientNode struct {
	node, id string
	seq      int32
}

// clientOrder returns the client nodes in sequence order, ignoring foreign
// names and duplicate ids.
func clientOrder(kids []string) []clientNode {
	out := make([]clientNode, 0, len(kids))
	seen := map[string]bool{}
	for _, k := range kids {
		if !zkcoord.IsProtected(k) {
			continue
		}
		id := zkcoord.StripProtected(k)
		digits, ok := strings.CutPrefix(id, "c_")
		if !ok || seen[id] {
			continue
		}
		n, ok := seq.Parse(digits)
		if !ok {
			continue
		}
		seen[id] = true
		out = append(out, clientNode{node: k, id: id, seq: n})
	}
	// The rebalancer's order: the serial order of the sequence numbers.
	order := seq.SerialBy(out, func(x clientNode) int32 { return x.seq })
	slices.SortFunc(out, func(a, b clientNode) int {
		return cmp.Or(order.Compare(a.seq, b.seq), strings.Compare(a.node, b.node))
	})
	return out
}

func sortStrings(s []string) { slices.Sort(s) }
