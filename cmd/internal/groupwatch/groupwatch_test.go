package groupwatch

import (
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/rebalance"
)

// Episodes counts a rebalancing from the first snapshot that shows a
// change to the first settled one, says what changed and how many
// resources moved, and counts none for a settled group found on joining.
func TestEpisodes(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	member := func(id, name string) rebalance.MemberInfo { return rebalance.MemberInfo{ID: id, Name: name} }
	settled := &rebalance.Description{Generation: 1, Resources: []string{"r1", "r2"},
		Members:  []rebalance.MemberInfo{member("c1", "w1")},
		Barriers: []rebalance.BarrierHolder{{Resource: "r1", Client: "c1"}, {Resource: "r2", Client: "c1"}}}
	moving := &rebalance.Description{Generation: 2, Rebalancing: true, Resources: settled.Resources,
		Members:  []rebalance.MemberInfo{member("c1", "w1"), member("c2", "w2")},
		Barriers: []rebalance.BarrierHolder{{Resource: "r1", Client: "c1"}}}
	after := &rebalance.Description{Generation: 2, Resources: settled.Resources, Coordinator: "c1",
		Members:  moving.Members,
		Barriers: []rebalance.BarrierHolder{{Resource: "r1", Client: "c1"}, {Resource: "r2", Client: "c2"}}}

	var eps Episodes
	if e := eps.Observe(Snapshot{At: at(0), D: settled}); e == nil || e.N != 1 || e.Moved != 2 {
		t.Fatalf("first settled state: %+v", e)
	}
	if e := eps.Observe(Snapshot{At: at(100), D: settled}); e != nil {
		t.Fatalf("no change, yet %+v", e)
	}
	if e := eps.Observe(Snapshot{At: at(300), Since: at(200), D: moving}); e != nil {
		t.Fatalf("ended while moving: %+v", e)
	}
	e := eps.Observe(Snapshot{At: at(700), Since: at(650), D: after})
	if e == nil || e.N != 2 || e.Duration() != 500*time.Millisecond || e.Moved != 1 || e.Trigger != "joined w2" || e.Coord != "w1" {
		t.Fatalf("rebalancing: %+v", e)
	}
	// A whole rebalancing between two snapshots counts from the change.
	back := &rebalance.Description{Generation: 3, Resources: settled.Resources, Members: settled.Members,
		Barriers: settled.Barriers}
	e = eps.Observe(Snapshot{At: at(1000), Since: at(900), D: back})
	if e == nil || e.N != 3 || e.Duration() != 100*time.Millisecond || e.Trigger != "left w2" {
		t.Fatalf("quick rebalancing: %+v", e)
	}

	// Joining a settled group mid-life sees no rebalancing until the
	// group changes.
	late := Episodes{Joined: true}
	if e := late.Observe(Snapshot{At: at(0), D: settled}); e != nil {
		t.Fatalf("a settled group found on joining counted as %+v", e)
	}
	late.Observe(Snapshot{At: at(300), Since: at(200), D: moving})
	if e := late.Observe(Snapshot{At: at(700), D: after}); e == nil || e.N != 1 || e.Duration() != 500*time.Millisecond {
		t.Fatalf("the first rebalancing seen after joining: %+v", e)
	}
}
