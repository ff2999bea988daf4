package alloc

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrInvalid is wrapped by the errors of [Assignment.Check] and by [Encode]
// when an assignment is not well formed.
var ErrInvalid = errors.New("alloc: invalid assignment")

// Assignment maps a client id to the sorted ids of the resources it owns.
//
// Assignments built by this package list every client they were given, with
// an empty non-nil slice for a client that owns nothing, and never list a
// resource twice. Assignments read from elsewhere may be malformed; the
// functions here still behave deterministically: when several clients list
// the same resource, the client with the smallest id is its owner.
type Assignment map[string][]string

// Clients returns the client ids of a, sorted.
func (a Assignment) Clients() []string {
	out := make([]string, 0, len(a))
	for c := range a {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Owner returns the client owning resource. It scans the whole assignment;
// use [Assignment.Owners] for many lookups.
func (a Assignment) Owner(resource string) (client string, ok bool) {
	for c, rs := range a {
		if !contains(rs, resource) {
			continue
		}
		if !ok || c < client {
			client, ok = c, true
		}
	}
	return client, ok
}

// Owners returns the inverse of a: resource id to owning client id.
func (a Assignment) Owners() map[string]string {
	n := 0
	for _, rs := range a {
		n += len(rs)
	}
	owners := make(map[string]string, n)
	for _, c := range a.Clients() {
		for _, r := range a[c] {
			if _, dup := owners[r]; !dup {
				owners[r] = c
			}
		}
	}
	return owners
}

// Resources returns every resource owned by some client, sorted, each once.
func (a Assignment) Resources() []string {
	var out []string
	for _, rs := range a {
		out = append(out, rs...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Equal reports whether a and b give every client the same resources. A
// client absent from one side equals a client owning nothing on the other,
// and the order of the lists does not matter.
func (a Assignment) Equal(b Assignment) bool {
	return equalOneWay(a, b) && equalOneWay(b, a)
}

func equalOneWay(a, b Assignment) bool {
	for c, ra := range a {
		rb := b[c]
		if len(ra) != len(rb) {
			return false
		}
		if len(ra) == 0 {
			continue
		}
		if !slices.Equal(sortedCopy(ra), sortedCopy(rb)) {
			return false
		}
	}
	return true
}

// Clone returns a deep copy of a.
func (a Assignment) Clone() Assignment {
	if a == nil {
		return nil
	}
	out := make(Assignment, len(a))
	for c, rs := range a {
		out[c] = append(make([]string, 0, len(rs)), rs...)
	}
	return out
}

// Check verifies that a is a valid allocation of resources to clients:
// only known clients and known resources, each list sorted and without
// duplicates, every resource owned by exactly one client, and list sizes
// differing by at most one (a client of clients absent from a owns nothing).
// With no clients, nothing can be owned and Check only requires a to own
// nothing. Duplicate ids in clients or resources are ignored. The error wraps
// [ErrInvalid].
func (a Assignment) Check(clients, resources []string) error {
	cs := uniqueSorted(clients)
	rs := uniqueSorted(resources)
	known, wanted := set(cs), set(rs)
	owner := make(map[string]string, len(rs))
	for _, c := range a.Clients() {
		list := a[c]
		if !known[c] {
			return fmt.Errorf("%w: unknown client %q (%d resources)", ErrInvalid, c, len(list))
		}
		for i, r := range list {
			if i > 0 && list[i-1] >= r {
				return fmt.Errorf("%w: client %q: resources not strictly sorted at %q", ErrInvalid, c, r)
			}
			if !wanted[r] {
				return fmt.Errorf("%w: client %q owns unknown resource %q", ErrInvalid, c, r)
			}
			if prev, dup := owner[r]; dup {
				return fmt.Errorf("%w: resource %q owned by both %q and %q", ErrInvalid, r, prev, c)
			}
			owner[r] = c
		}
	}
	if len(cs) == 0 {
		return nil // nothing can be owned, and nothing is
	}
	if err := unowned(owner, rs); err != nil {
		return err
	}
	lo, hi := len(a[cs[0]]), len(a[cs[0]])
	loC, hiC := cs[0], cs[0]
	for _, c := range cs[1:] {
		n := len(a[c])
		if n < lo {
			lo, loC = n, c
		}
		if n > hi {
			hi, hiC = n, c
		}
	}
	if hi-lo > 1 {
		return fmt.Errorf("%w: unbalanced: %q owns %d, %q owns %d", ErrInvalid, hiC, hi, loC, lo)
	}
	return nil
}

// Moved returns, sorted, the resources owned in next whose owner differs from
// their owner in prev, including resources that prev did not assign at all
// (new resources, or resources of clients that left). Resources present in
// prev but absent from next are not listed: they vanished and nobody owns
// them any more. The length of Moved is the number of resources that some
// client must start without having held it before.
func Moved(prev, next Assignment) []string {
	before := prev.Owners()
	var out []string
	for r, c := range next.Owners() {
		if p, ok := before[r]; !ok || p != c {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// Diff returns, sorted, what client owns in prev but not in next (lost: it
// must stop these) and what it owns in next but not in prev (gained: it may
// start these once their previous owner released them).
func Diff(prev, next Assignment, client string) (lost, gained []string) {
	was := uniqueSorted(prev[client])
	now := uniqueSorted(next[client])
	i, j := 0, 0
	for i < len(was) || j < len(now) {
		switch {
		case j == len(now) || (i < len(was) && was[i] < now[j]):
			lost = append(lost, was[i])
			i++
		case i == len(was) || now[j] < was[i]:
			gained = append(gained, now[j])
			j++
		default:
			i++
			j++
		}
	}
	return lost, gained
}

func contains(sorted []string, s string) bool {
	if slices.IsSorted(sorted) {
		_, ok := slices.BinarySearch(sorted, s)
		return ok
	}
	return slices.Contains(sorted, s)
}

func sortedCopy(s []string) []string {
	out := append(make([]string, 0, len(s)), s...)
	slices.Sort(out)
	return out
}

// uniqueSorted returns a sorted copy of s without duplicates.
func uniqueSorted(s []string) []string {
	return slices.Compact(sortedCopy(s))
}

// set returns the ids as a set.
func set(ids []string) map[string]bool {
	s := make(map[string]bool, len(ids))
	for _, id := range ids {
		s[id] = true
	}
	return s
}

// unowned returns the error for the resources of rs that owner gives no
// client, or nil when every one has an owner (owner holds only resources
// of rs).
func unowned(owner map[string]string, rs []string) error {
	if len(owner) == len(rs) {
		return nil
	}
	var missing []string
	for _, r := range rs {
		if _, ok := owner[r]; !ok {
			missing = append(missing, r)
		}
	}
	return fmt.Errorf("%w: %d of %d resources unowned: %s", ErrInvalid, len(missing), len(rs), sample(missing))
}

func sample(ids []string) string {
	const max = 5
	if len(ids) <= max {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:max], ", ") + fmt.Sprintf(", ... (%d more)", len(ids)-max)
}
