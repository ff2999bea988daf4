package alloc

import (
	"cmp"
	"container/heap"
	"math/bits"
	"slices"
	"strings"
)

// MaxWeight is the largest weight a client or resource may have; larger
// weights count as MaxWeight.
const MaxWeight = 1_000_000

// Weights gives clients (their capacity) or resources (their cost) a
// weight. An id it does not list weighs 1, and so does a weight below 1;
// a weight above MaxWeight counts as MaxWeight.
type Weights map[string]int64

// Of returns the weight of id, as the functions of this package count it.
func (w Weights) Of(id string) int64 {
	v, ok := w[id]
	switch {
	case !ok || v < 1:
		return 1
	case v > MaxWeight:
		return MaxWeight
	}
	return v
}

// uniform reports whether every id weighs 1.
func (w Weights) uniform(ids []string) bool {
	for _, id := range ids {
		if w.Of(id) != 1 {
			return false
		}
	}
	return true
}

// WeightedBalanced is [WeightedSticky] without a previous assignment.
func WeightedBalanced(clients []string, cw Weights, resources []string, rw Weights) Assignment {
	return WeightedSticky(nil, clients, cw, resources, rw)
}

// WeightedSticky is [Sticky] for clients of different capacities and
// resources of different costs. A client's share is the total weight of
// the resources times the client's weight divided by the total weight of
// the clients; a client's load is the total weight of its resources.
//
// When every resource weighs 1, each client owns its share rounded down or
// up (the total is apportioned by largest remainder), and the fewest
// resources move, as with Sticky: a client keeps what it owned up to its
// count, the counts rounded up go first to the clients that can keep the
// most, then to the largest remainders, then by id. With every client
// weighing 1 as well, the result is Sticky's.
//
// Otherwise each client keeps its previous resources, lightest first, as
// long as its load before each one is at most its share. The others go,
// heaviest first (ties by id), each to the client whose load per weight
// after taking it is the smallest among the clients not above their share
// (ties by id). Then, while it makes the loads more even (lowers the sum
// of load²/weight), a resource moves from the client with the largest load
// per weight to the one with the smallest. Every client's load minus its
// heaviest resource is then at most its share (so its load exceeds its
// share by less than the heaviest resource's weight), and the result given
// back with the same clients, resources and weights is returned unchanged:
// nothing moves without a change.
//
// As with Sticky, the result depends only on the sets and weights given,
// every client is a key of it, and with no clients it is empty.
func WeightedSticky(prev Assignment, clients []string, cw Weights, resources []string, rw Weights) Assignment {
	cs := uniqueSorted(clients)
	rs := uniqueSorted(resources)
	if len(cs) == 0 {
		return Assignment{}
	}
	if rw.uniform(rs) {
		if cw.uniform(cs) {
			return Sticky(prev, cs, rs)
		}
		return apportioned(prev, cs, cw, rs)
	}
	return packed(prev, cs, cw, rs, rw)
}

// apportioned is WeightedSticky for resources of weight 1: client i owns
// floor(M*w_i/W) resources, or one more.
func apportioned(prev Assignment, cs []string, cw Weights, rs []string) Assignment {
	kept, pool := keptAndPool(prev, cs, rs)
	m := uint64(len(rs))
	var total uint64
	for _, c := range cs {
		total += uint64(cw.Of(c))
	}
	target := make([]int, len(cs))
	rem := make([]uint64, len(cs))
	extra := len(rs)
	var up []int // clients whose share is not whole
	for i, c := range cs {
		hi, lo := bits.Mul64(m, uint64(cw.Of(c)))
		q, r := bits.Div64(hi, lo, total)
		target[i], rem[i] = int(q), r
		extra -= int(q)
		if r > 0 {
			up = append(up, i)
		}
	}
	// The sum of the remainders is extra*total, each below total: at least
	// extra clients have one.
	slices.SortStableFunc(up, func(x, y int) int {
		keepX, keepY := len(kept[x]) > target[x], len(kept[y]) > target[y]
		if keepX != keepY {
			if keepX {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(rem[y], rem[x]), cmp.Compare(len(kept[y]), len(kept[x])))
	})
	for _, i := range up[:extra] {
		target[i]++
	}
	return fill(cs, kept, pool, target)
}

// packed is WeightedSticky for resources of different weights.
func packed(prev Assignment, cs []string, cw Weights, rs []string, rw Weights) Assignment {
	lists, pool := keptAndPool(prev, cs, rs)
	var totalW, totalR uint64
	for _, c := range cs {
		totalW += uint64(cw.Of(c))
	}
	for _, r := range rs {
		totalR += uint64(rw.Of(r))
	}
	weight := func(r string) uint64 { return uint64(rw.Of(r)) }
	lighterFirst := func(a, b string) int {
		return cmp.Or(cmp.Compare(weight(a), weight(b)), strings.Compare(a, b))
	}
	h := &loads{w: make([]uint64, len(cs)), load: make([]uint64, len(cs))}
	aboveShare := func(i int) bool { return mul(h.load[i], totalW).cmp(mul(totalR, h.w[i])) > 0 }
	// Each client keeps, lightest first, while its load is at most its
	// share: load*totalW <= totalR*w. Clients of equal weight form a
	// class, a heap by load.
	var classes []*loads
	byWeight := map[uint64]*loads{}
	for i, c := range cs {
		h.w[i] = uint64(cw.Of(c))
		slices.SortFunc(lists[i], lighterFirst)
		n := 0
		for _, r := range lists[i] {
			if aboveShare(i) {
				break
			}
			h.load[i] += weight(r)
			n++
		}
		pool = append(pool, lists[i][n:]...)
		lists[i] = lists[i][:n:n]
		cl := byWeight[h.w[i]]
		if cl == nil {
			cl = &loads{w: h.w, load: h.load}
			byWeight[h.w[i]] = cl
			classes = append(classes, cl)
		}
		cl.order = append(cl.order, i)
	}
	for _, cl := range classes {
		heap.Init(cl)
	}
	// The rest, heaviest first, each to the client, among those whose load
	// is at most their share, whose load per weight after taking it is the
	// smallest (ties by id). The least loaded of each class is the only
	// candidate of its class; the least loaded of all is never above its
	// share, so there is always one.
	slices.SortFunc(pool, func(a, b string) int {
		return cmp.Or(cmp.Compare(weight(b), weight(a)), strings.Compare(a, b))
	})
	for _, r := range pool {
		wr := weight(r)
		var best *loads
		for _, cl := range classes {
			i := cl.order[0]
			if aboveShare(i) {
				continue
			}
			if best == nil {
				best = cl
				continue
			}
			j := best.order[0]
			if c := mul(h.load[i]+wr, h.w[j]).cmp(mul(h.load[j]+wr, h.w[i])); c < 0 || (c == 0 && i < j) {
				best = cl
			}
		}
		i := best.order[0]
		lists[i] = append(lists[i], r)
		h.load[i] += wr
		heap.Fix(best, 0)
	}
	for i := range lists {
		slices.SortFunc(lists[i], lighterFirst)
	}
	h.even(lists, weight, 2*len(rs)+len(cs))
	out := make(Assignment, len(cs))
	for i, c := range cs {
		list := append(make([]string, 0, len(lists[i])), lists[i]...)
		slices.Sort(list)
		out[c] = list
	}
	return out
}

// even moves resources from the client with the largest load per weight
// (g) to the one with the smallest (k) while that lowers the sum of
// load²/weight, at most limit times: a resource of weight r may go if
// r(w_g+w_k) < 2(L_g w_k - L_k w_g). It takes the heaviest that does not
// overshoot the even split, r(w_g+w_k) <= L_g w_k - L_k w_g, or else the
// lightest that still lowers the sum (ties by id). It stops at the first
// pair with no such resource, so that an assignment it leaves is left
// alone the next time. lists are sorted lightest first and stay so.
//
// k's load per weight is the smallest, so at most the average: its load
// before it receives r is at most its share, and every client's load
// minus its heaviest resource stays at most its share. The sum strictly
// falls with every move, so the moves end; limit is a guard (never
// reached in the fuzzing): an assignment left at it keeps that bound but
// may be evened out further the next time.
func (h *loads) even(lists [][]string, weight func(string) uint64, limit int) {
	for range limit {
		g, k := 0, 0
		for i := range h.load {
			if h.ratio(i, g) > 0 {
				g = i
			}
			if h.ratio(i, k) < 0 {
				k = i
			}
		}
		diff, lower := mul(h.load[g], h.w[k]), mul(h.load[k], h.w[g])
		if diff.cmp(lower) <= 0 {
			return // all even
		}
		diff = diff.sub(lower)
		twice, s := diff.double(), h.w[g]+h.w[k]
		best := -1
		for j, r := range lists[g] {
			x := mul(weight(r), s)
			if x.cmp(diff) <= 0 {
				if best < 0 || weight(r) > weight(lists[g][best]) {
					best = j
				}
				continue
			}
			if best < 0 && x.cmp(twice) < 0 {
				best = j
			}
			break
		}
		if best < 0 {
			return
		}
		r := lists[g][best]
		lists[g] = slices.Delete(lists[g], best, best+1)
		at, _ := slices.BinarySearchFunc(lists[k], r, func(a, b string) int {
			return cmp.Or(cmp.Compare(weight(a), weight(b)), strings.Compare(a, b))
		})
		lists[k] = slices.Insert(lists[k], at, r)
		h.load[g] -= weight(r)
		h.load[k] += weight(r)
	}
}

// loads is a heap of client indices, the smallest load per weight first
// (ties by index, that is by id).
type loads struct {
	w, load []uint64
	order   []int
}

// ratio compares the loads per weight of clients i and j.
func (h *loads) ratio(i, j int) int {
	// load_i/w_i against load_j/w_j, that is load_i*w_j against load_j*w_i.
	return mul(h.load[i], h.w[j]).cmp(mul(h.load[j], h.w[i]))
}

func (h *loads) Len() int { return len(h.order) }
func (h *loads) Less(a, b int) bool {
	i, j := h.order[a], h.order[b]
	if c := h.ratio(i, j); c != 0 {
		return c < 0
	}
	return i < j
}
func (h *loads) Swap(a, b int) { h.order[a], h.order[b] = h.order[b], h.order[a] }
func (h *loads) Push(x any)    { panic("alloc: loads is a fixed heap") }
func (h *loads) Pop() any      { panic("alloc: loads is a fixed heap") }

// u128 is an unsigned 128-bit number: products of loads and weights.
type u128 struct{ hi, lo uint64 }

func mul(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

func (x u128) sub(y u128) u128 {
	lo, borrow := bits.Sub64(x.lo, y.lo, 0)
	hi, _ := bits.Sub64(x.hi, y.hi, borrow)
	return u128{hi, lo}
}

func (x u128) double() u128 { return u128{x.hi<<1 | x.lo>>63, x.lo << 1} }

func (x u128) cmp(y u128) int { return cmp.Or(cmp.Compare(x.hi, y.hi), cmp.Compare(x.lo, y.lo)) }
