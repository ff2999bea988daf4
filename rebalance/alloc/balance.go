package alloc

import (
	"slices"
)

// Balanced assigns resources to clients evenly, ignoring any earlier
// assignment: clients sorted by id receive contiguous runs of the sorted
// resources, and the first M mod N clients receive one more than the others.
// Duplicate ids are ignored. Every client is a key of the result; with no
// clients the result is empty. Balanced(c, r) equals Sticky(nil, c, r).
func Balanced(clients, resources []string) Assignment {
	return Sticky(nil, clients, resources)
}

// Sticky returns a balanced assignment of resources to clients that keeps as
// many resources as possible with their owner in prev.
//
// Clients absent from clients lose everything; resources absent from
// resources vanish; a resource nobody owned in prev (new, or left behind by a
// departed client) goes to a client below its share. When several clients of
// prev list the same resource, only the one with the smallest id counts as its
// owner.
//
// The number of moved resources (see [Moved]) is the minimum possible: with N
// clients, M resources, q = M/N and k(c) the resources client c owned in prev
// and may keep, exactly M mod N clients get q+1 resources and the others q,
// so at most sum(min(k(c), q)) + min(M mod N, |{c : k(c) > q}|) resources
// can stay, and Sticky keeps exactly that many: the larger shares go to the
// clients that can keep the most (ties by id), a client above its share keeps
// its smallest ids, and the freed and unowned resources fill the clients
// below their share in id order.
//
// The result depends only on the sets given (not on slice order); running
// Sticky again on its own result with the same clients and resources returns
// the same assignment. Every client is a key of the result; with no clients
// the result is empty.
func Sticky(prev Assignment, clients, resources []string) Assignment {
	cs := uniqueSorted(clients)
	rs := uniqueSorted(resources)
	if len(cs) == 0 {
		return Assignment{}
	}
	kept, pool := keptAndPool(prev, cs, rs)

	// Shares: q each, q+1 for rem clients, preferring those keeping the most.
	q, rem := len(rs)/len(cs), len(rs)%len(cs)
	target := make([]int, len(cs))
	for i := range target {
		target[i] = q
	}
	if rem > 0 {
		order := make([]int, len(cs))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(x, y int) int {
			return len(kept[y]) - len(kept[x]) // more kept first; stable keeps id order
		})
		for _, i := range order[:rem] {
			target[i]++
		}
	}
	return fill(cs, kept, pool, target)
}

// keptAndPool splits the sorted resources rs into those each client of the
// sorted cs owned in prev and may keep (kept[i], sorted) and the others.
func keptAndPool(prev Assignment, cs, rs []string) (kept [][]string, pool []string) {
	alive := make(map[string]int, len(cs))
	for i, c := range cs {
		alive[c] = i
	}
	kept = make([][]string, len(cs))
	owners := prev.Owners()
	for _, r := range rs {
		if o, ok := owners[r]; ok {
			if i, ok := alive[o]; ok {
				kept[i] = append(kept[i], r)
				continue
			}
		}
		pool = append(pool, r)
	}
	return kept, pool
}

// fill completes an assignment: clients above their target give up their
// largest ids, then those below take from the pool in id order.
func fill(cs []string, kept [][]string, pool []string, target []int) Assignment {
	for i := range cs {
		if len(kept[i]) > target[i] {
			pool = append(pool, kept[i][target[i]:]...)
			kept[i] = kept[i][:target[i]:target[i]]
		}
	}
	slices.Sort(pool)
	out := make(Assignment, len(cs))
	next := 0
	for i, c := range cs {
		list := make([]string, 0, target[i])
		list = append(list, kept[i]...)
		if need := target[i] - len(kept[i]); need > 0 {
			list = append(list, pool[next:next+need]...)
			next += need
			slices.Sort(list)
		}
		out[c] = list
	}
	return out
}
