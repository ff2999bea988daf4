package alloc

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestBalanced(t *testing.T) {
	tests := []struct {
		name      string
		clients   []string
		resources []string
		want      Assignment
	}{
		{"no clients", nil, []string{"r1"}, Assignment{}},
		{"no resources", []string{"b", "a"}, nil, Assignment{"a": {}, "b": {}}},
		{"even", []string{"a", "b"}, []string{"r4", "r3", "r2", "r1"},
			Assignment{"a": {"r1", "r2"}, "b": {"r3", "r4"}}},
		{"remainder to smallest ids", []string{"c", "a", "b"}, []string{"r1", "r2", "r3", "r4", "r5"},
			Assignment{"a": {"r1", "r2"}, "b": {"r3", "r4"}, "c": {"r5"}}},
		{"more clients than resources", []string{"a", "b", "c"}, []string{"r1"},
			Assignment{"a": {"r1"}, "b": {}, "c": {}}},
		{"duplicates ignored", []string{"a", "a", "b"}, []string{"r1", "r1", "r2", "r3"},
			Assignment{"a": {"r1", "r2"}, "b": {"r3"}}},
		{"sequence names sort by sequence", []string{"c_0000000010", "c_0000000009"}, []string{"x", "y", "z"},
			Assignment{"c_0000000009": {"x", "y"}, "c_0000000010": {"z"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Balanced(tt.clients, tt.resources)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Balanced = %v, want %v", got, tt.want)
			}
			if err := got.Check(tt.clients, tt.resources); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSticky(t *testing.T) {
	abc := []string{"a", "b", "c"}
	r10 := ids("r", 10, 2)
	base := Balanced(abc, r10) // a: r00-r03, b: r04-r06, c: r07-r09
	tests := []struct {
		name      string
		prev      Assignment
		clients   []string
		resources []string
		want      Assignment // nil: only the properties are checked
		moves     int
	}{
		{name: "nothing changed", prev: base, clients: abc, resources: r10, want: base, moves: 0},
		{name: "from nothing equals Balanced", prev: nil, clients: abc, resources: r10,
			want: base, moves: 10},
		{name: "join takes one from each of the larger", prev: base,
			clients: []string{"a", "b", "c", "d"}, resources: r10,
			// q=2, rem=2: a(4), b(3) and c(3) can all keep more than 2; the
			// two larger shares go to a and b (more kept, then id).
			want: Assignment{
				"a": {"r00", "r01", "r02"}, "b": {"r04", "r05", "r06"},
				"c": {"r07", "r08"}, "d": {"r03", "r09"},
			}, moves: 2},
		{name: "leave moves only the leaver's", prev: base, clients: []string{"a", "c"}, resources: r10,
			want: Assignment{
				"a": {"r00", "r01", "r02", "r03", "r04"},
				"c": {"r05", "r06", "r07", "r08", "r09"},
			}, moves: 3},
		{name: "new resource to the least loaded", prev: base, clients: abc,
			resources: append(slices.Clone(r10), "r10"),
			want: Assignment{
				"a": {"r00", "r01", "r02", "r03"}, "b": {"r04", "r05", "r06", "r10"},
				"c": {"r07", "r08", "r09"},
			}, moves: 1},
		{name: "vanished resource moves nothing", prev: base, clients: abc,
			resources: slices.Delete(slices.Clone(r10), 0, 1),
			want: Assignment{
				"a": {"r01", "r02", "r03"}, "b": {"r04", "r05", "r06"},
				"c": {"r07", "r08", "r09"},
			}, moves: 0},
		{name: "vanished resources force a rebalance", prev: base, clients: abc,
			resources: []string{"r00", "r01", "r02", "r03", "r04"},
			// q=1, rem=2: a keeps 2 of its 4, b keeps r04 and takes r02, c r03.
			want: Assignment{"a": {"r00", "r01"}, "b": {"r02", "r04"}, "c": {"r03"}}, moves: 2},
		{name: "no clients", prev: base, clients: nil, resources: r10, want: Assignment{}},
		{name: "all new clients", prev: base, clients: []string{"x", "y"}, resources: r10,
			want: Balanced([]string{"x", "y"}, r10), moves: 10},
		{name: "malformed prev: duplicate goes to the smallest id", clients: abc,
			prev:      Assignment{"b": {"r1", "r2"}, "a": {"r2"}, "z": {"r3"}},
			resources: []string{"r1", "r2", "r3"},
			want:      Assignment{"a": {"r2"}, "b": {"r1"}, "c": {"r3"}}, moves: 1},
		{name: "malformed prev: unsorted and unknown", clients: abc,
			prev:      Assignment{"a": {"r9", "r1", "gone"}, "b": nil},
			resources: []string{"r1", "r9", "r5"},
			want:      Assignment{"a": {"r1"}, "b": {"r5"}, "c": {"r9"}}, moves: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkSticky(t, tt.prev, tt.clients, tt.resources)
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Sticky = %v, want %v", got, tt.want)
			}
			if n := len(Moved(tt.prev, got)); n != tt.moves {
				t.Fatalf("moved %d, want %d", n, tt.moves)
			}
		})
	}
}

// TestStickyJoinBound: one client joining N clients that share M resources
// moves at most ceil(M/(N+1)) resources (the newcomer's share), whatever the
// sizes, and each leave moves only the leaver's resources.
func TestStickyJoinBound(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 50} {
		for _, m := range []int{0, 1, 5, 49, 50, 51, 1000} {
			clients := ids("c_", n, 10)
			resources := ids("resource-", m, 6)
			prev := Balanced(clients, resources)
			joined := append(slices.Clone(clients), "c_9999999999")
			next := checkSticky(t, prev, joined, resources)
			if moved, bound := len(Moved(prev, next)), (m+n)/(n+1); moved > bound {
				t.Fatalf("n=%d m=%d: join moved %d > ceil(M/(N+1)) = %d", n, m, moved, bound)
			}
			left := checkSticky(t, next, joined[1:], resources)
			if moved := len(Moved(next, left)); moved != len(next[joined[0]]) {
				t.Fatalf("n=%d m=%d: leave moved %d, the leaver had %d", n, m, moved, len(next[joined[0]]))
			}
		}
	}
}

// TestStickyRandomWalk applies random joins, leaves, additions and removals,
// checking every step.
func TestStickyRandomWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pool := ids("c_", 40, 10)
	res := ids("resource-", 300, 6)
	var clients, resources []string
	var a Assignment
	for step := 0; step < 400; step++ {
		switch r.IntN(4) {
		case 0:
			clients = append(clients, pool[r.IntN(len(pool))])
		case 1:
			if len(clients) > 0 {
				i := r.IntN(len(clients))
				clients = slices.Delete(clients, i, i+1)
			}
		case 2:
			for i := r.IntN(20); i >= 0; i-- {
				resources = append(resources, res[r.IntN(len(res))])
			}
		case 3:
			for i := r.IntN(20); i >= 0 && len(resources) > 0; i-- {
				j := r.IntN(len(resources))
				resources = slices.Delete(resources, j, j+1)
			}
		}
		// Sticky ignores duplicates; Check and minMoves need unique ids.
		clients = uniqueSorted(clients)
		resources = uniqueSorted(resources)
		a = checkSticky(t, a, clients, resources)
	}
}

func TestMovedAndDiff(t *testing.T) {
	prev := Assignment{"a": {"r1", "r2"}, "b": {"r3"}, "gone": {"r4"}}
	next := Assignment{"a": {"r1"}, "b": {"r2", "r3", "r4", "r5"}}
	if got, want := Moved(prev, next), []string{"r2", "r4", "r5"}; !slices.Equal(got, want) {
		t.Fatalf("Moved = %v, want %v", got, want)
	}
	if got := Moved(next, next); len(got) != 0 {
		t.Fatalf("Moved(x, x) = %v", got)
	}
	if got, want := Moved(nil, next), next.Resources(); !slices.Equal(got, want) {
		t.Fatalf("Moved(nil, next) = %v, want %v", got, want)
	}
	lost, gained := Diff(prev, next, "a")
	if !slices.Equal(lost, []string{"r2"}) || gained != nil {
		t.Fatalf("Diff a = %v, %v", lost, gained)
	}
	lost, gained = Diff(prev, next, "b")
	if lost != nil || !slices.Equal(gained, []string{"r2", "r4", "r5"}) {
		t.Fatalf("Diff b = %v, %v", lost, gained)
	}
	lost, gained = Diff(prev, next, "gone")
	if !slices.Equal(lost, []string{"r4"}) || gained != nil {
		t.Fatalf("Diff gone = %v, %v", lost, gained)
	}
}

func TestAccessors(t *testing.T) {
	a := Assignment{"b": {"r2", "r1"}, "a": {"r2", "r3"}, "c": {}}
	if c, ok := a.Owner("r2"); !ok || c != "a" {
		t.Fatalf("Owner(r2) = %q, %v (want the smallest id of the two)", c, ok)
	}
	if c, ok := a.Owner("r1"); !ok || c != "b" {
		t.Fatalf("Owner(r1) = %q, %v", c, ok)
	}
	if _, ok := a.Owner("r9"); ok {
		t.Fatal("Owner(r9) found")
	}
	if got := a.Owners(); !reflect.DeepEqual(got, map[string]string{"r1": "b", "r2": "a", "r3": "a"}) {
		t.Fatalf("Owners = %v", got)
	}
	if got := a.Resources(); !slices.Equal(got, []string{"r1", "r2", "r3"}) {
		t.Fatalf("Resources = %v", got)
	}
	if got := a.Clients(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("Clients = %v", got)
	}
	if !a.Equal(Assignment{"a": {"r3", "r2"}, "b": {"r1", "r2"}}) {
		t.Fatal("Equal: want equal (order, absent empty client)")
	}
	if a.Equal(Assignment{"a": {"r3", "r2"}, "b": {"r1"}}) || a.Equal(Assignment{"a": {"r3", "r2"}, "b": {"r1", "r2"}, "d": {"r4"}}) {
		t.Fatal("Equal: want different")
	}
	c := a.Clone()
	c["a"][0] = "changed"
	if a["a"][0] != "r2" {
		t.Fatal("Clone shares lists")
	}
}

func TestCheck(t *testing.T) {
	clients := []string{"a", "b", "c"}
	resources := []string{"r1", "r2", "r3", "r4"}
	tests := []struct {
		name string
		a    Assignment
		ok   bool
	}{
		{"valid", Assignment{"a": {"r1", "r2"}, "b": {"r3"}, "c": {"r4"}}, true},
		{"absent client owns nothing", Assignment{"a": {"r1", "r2"}, "b": {"r3", "r4"}}, false},
		{"unknown client", Assignment{"a": {"r1", "r2"}, "b": {"r3"}, "x": {"r4"}}, false},
		{"unknown client owning nothing", Assignment{"a": {"r1", "r2"}, "b": {"r3"}, "c": {"r4"}, "x": {}}, false},
		{"unknown resource", Assignment{"a": {"r1", "r2"}, "b": {"r3"}, "c": {"r9"}}, false},
		{"missing resource", Assignment{"a": {"r1"}, "b": {"r3"}, "c": {"r4"}}, false},
		{"duplicate across clients", Assignment{"a": {"r1", "r2"}, "b": {"r2", "r3"}, "c": {"r4"}}, false},
		{"duplicate in a list", Assignment{"a": {"r1", "r1"}, "b": {"r2", "r3"}, "c": {"r4"}}, false},
		{"unsorted", Assignment{"a": {"r2", "r1"}, "b": {"r3"}, "c": {"r4"}}, false},
		{"unbalanced", Assignment{"a": {"r1", "r2", "r3"}, "b": {"r4"}, "c": {}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.a.Check(clients, resources)
			if (err == nil) != tt.ok {
				t.Fatalf("Check = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Check error %v does not wrap ErrInvalid", err)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
	if err := (Assignment{}).Check(nil, resources); err != nil {
		t.Fatalf("no clients, nothing owned: %v", err)
	}
	if err := (Assignment{"a": {"r1"}}).Check(nil, resources); err == nil {
		t.Fatal("no clients but something owned: want error")
	}
	if err := (Assignment{"a": {"r1"}, "b": {"r2"}}).Check(clients, resources[:2]); err != nil {
		t.Fatalf("absent client owning nothing, balanced: %v", err)
	}
	if err := (Assignment{"a": {}}).Check([]string{"a", "b"}, nil); err != nil {
		t.Fatalf("no resources: %v", err)
	}
}
