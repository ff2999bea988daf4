package alloc

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// ids returns n ids like "resource-000123".
func ids(prefix string, n, width int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%0*d", prefix, width, i)
	}
	return out
}

// prevOwners is the test's own reading of a possibly malformed assignment:
// for every resource, the smallest client id listing it.
func prevOwners(a Assignment) map[string]string {
	owners := map[string]string{}
	for c, rs := range a {
		for _, r := range rs {
			if o, ok := owners[r]; !ok || c < o {
				owners[r] = c
			}
		}
	}
	return owners
}

// minMoves computes, independently of Sticky, the fewest resources that must
// change owner (or get a first owner) in any balanced assignment of resources
// to clients, starting from prev.
//
// With N clients and M resources, a balanced assignment gives exactly M mod N
// clients q+1 = M/N+1 resources and the others q. Client c can keep at most
// min(k(c), size(c)) of the k(c) resources it owned and that still exist;
// giving c size q+1 instead of q gains one more kept resource exactly when
// k(c) > q. So the most that can stay is sum(min(k(c), q)) plus the number of
// the M mod N larger shares that can go to clients with k(c) > q, and every
// other resource moves.
func minMoves(prev Assignment, clients, resources []string) int {
	cs := map[string]bool{}
	for _, c := range clients {
		cs[c] = true
	}
	rs := map[string]bool{}
	for _, r := range resources {
		rs[r] = true
	}
	n, m := len(cs), len(rs)
	if n == 0 {
		return 0 // nothing can be owned, so nothing moves
	}
	k := map[string]int{}
	for r, o := range prevOwners(prev) {
		if rs[r] && cs[o] {
			k[o]++
		}
	}
	q, rem := m/n, m%n
	stay, above := 0, 0
	for c := range cs {
		stay += min(k[c], q)
		if k[c] > q {
			above++
		}
	}
	stay += min(rem, above)
	return m - stay
}

// countMoves counts, independently of Moved, the resources of next whose
// owner differs from prev's.
func countMoves(prev, next Assignment) int {
	before := prevOwners(prev)
	n := 0
	for c, rs := range next {
		for _, r := range rs {
			if before[r] != c {
				n++
			} else if _, ok := before[r]; !ok {
				n++
			}
		}
	}
	return n
}

func shuffled(r *rand.Rand, s []string) []string {
	out := slices.Clone(s)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// checkSticky asserts every property of Sticky for one input.
func checkSticky(t *testing.T, prev Assignment, clients, resources []string) Assignment {
	t.Helper()
	got := Sticky(prev, clients, resources)
	if err := got.Check(clients, resources); err != nil {
		t.Fatalf("Sticky(%v, %v, %v) = %v: %v", prev, clients, resources, got, err)
	}
	// Every client is a key, with a non-nil list.
	for _, c := range clients {
		if l, ok := got[c]; !ok || l == nil {
			t.Fatalf("client %q missing or nil in %v", c, got)
		}
	}
	// Fewest moves, counted two independent ways.
	want := minMoves(prev, clients, resources)
	if n := countMoves(prev, got); n != want {
		t.Fatalf("Sticky moved %d resources, minimum is %d\nprev=%v\nclients=%v resources=%v\ngot=%v",
			n, want, prev, clients, resources, got)
	}
	if moved := Moved(prev, got); len(moved) != want || !sort.StringsAreSorted(moved) {
		t.Fatalf("Moved = %v (%d), want %d sorted", moved, len(moved), want)
	}
	// Deterministic, whatever the order of the inputs.
	r := rand.New(rand.NewPCG(uint64(len(clients)), uint64(len(resources))))
	again := Sticky(prev.Clone(), shuffled(r, clients), append(shuffled(r, resources), resources...))
	if !equalExact(got, again) {
		t.Fatalf("not deterministic:\n%v\n%v", got, again)
	}
	// A fixed point: nothing moves when nothing changed.
	if fix := Sticky(got, clients, resources); !equalExact(got, fix) {
		t.Fatalf("not stable:\n%v\n%v", got, fix)
	}
	return got
}

// equalExact compares keys and lists exactly (order included), treating nil
// and empty lists alike.
func equalExact(a, b Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for c, l := range a {
		m, ok := b[c]
		if !ok || !slices.Equal(l, m) {
			return false
		}
	}
	return true
}
