package console

import (
	"slices"
	"testing"
)

const (
	u1 = "_c_0f8fad5b-d9cb-469f-a165-70867728950e-"
	u2 = "_c_7c9e6679-7425-40de-944b-e07fc1f90ae7-"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		kids []string
		want Kind
	}{
		{[]string{"clients", "resources", "barriers", "term", "status", "stopped"}, KindGroup},
		{[]string{"clients", "resources"}, ""},
		{[]string{"locks", "leases"}, KindSemaphore},
		{[]string{u1 + "latch-0000000003"}, KindElection},
		{[]string{u1 + "lock-0000000001", u2 + "lock-0000000000"}, KindMutex},
		{[]string{u1 + "__READ__0000000001", u2 + "__WRIT__0000000000"}, KindRWLock},
		{[]string{u1 + "queue-0000000007", "claims"}, KindQueue},
		{[]string{u1 + "queue-005-0000000007"}, KindQueue},
		{[]string{"8d3c2b1a-0b7e-4c38-9f7e-2a1d5c6b7e8f", "ready"}, KindDoubleBarrier},
		{[]string{"lock-0000000001"}, ""}, // not protected: not a zkcoord or Curator lock
		{[]string{"config", "app"}, ""},
		{nil, ""},
	} {
		if got := classify(tc.kids); got != tc.want {
			t.Errorf("classify(%v) = %q, want %q", tc.kids, got, tc.want)
		}
	}
}

func TestOrdered(t *testing.T) {
	kids := []string{u1 + "lock-0000000010", "foreign", u2 + "lock-0000000002", u1 + "__WRIT__0000000001", u2 + "__READ__0000000000"}
	if got, want := ordered(kids, lockMarker), []string{u2 + "lock-0000000002", u1 + "lock-0000000010"}; !slices.Equal(got, want) {
		t.Errorf("locks %v, want %v", got, want)
	}
	if got, want := ordered(kids, readMarker, writeMarker), []string{u2 + "__READ__0000000000", u1 + "__WRIT__0000000001"}; !slices.Equal(got, want) {
		t.Errorf("read/write %v, want %v", got, want)
	}
}

func TestTimelineChanges(t *testing.T) {
	lead := func(id, node string) *View {
		return &View{Kind: KindElection, Election: &ElectionView{Leader: &Contender{ID: id, Node: node}, Acting: true, Term: 2}}
	}
	if got := changes(lead("a", "n1"), lead("b", "n2")); len(got) != 1 || got[0] != "leader: b (session , token 0)" {
		t.Errorf("leader change: %q", got)
	}
	if got := changes(lead("a", "n1"), lead("a", "n1")); got != nil {
		t.Errorf("no change: %q", got)
	}
	group := func(gen int64, alloc map[string][]string) *View {
		return &View{Kind: KindGroup, Group: &GroupView{Generation: gen, Allocation: alloc}}
	}
	got := changes(group(1, map[string][]string{"c1": {"r1", "r2"}}), group(2, map[string][]string{"c1": {"r1"}, "c2": {"r2"}}))
	if !slices.Contains(got, "rebalanced: generation 2, 1 moved: r2 c1→c2") {
		t.Errorf("rebalancing: %q", got)
	}
}
