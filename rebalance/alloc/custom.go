package alloc

import (
	"fmt"
	"maps"
	"slices"
)

// Input is what an allocation function ([Func]) is given.
type Input struct {
	// Prev is the assignment in force (nil in a fresh group). It may list
	// clients that left and resources that were removed.
	Prev Assignment
	// Clients are the live clients, sorted; Resources the registered
	// resources, sorted.
	Clients, Resources []string
	// ClientWeights and ResourceWeights are the weights known (see
	// [Weights]); ids they do not list weigh 1.
	ClientWeights, ResourceWeights Weights
}

// Func computes an assignment of in.Resources to in.Clients: an allocation
// of the caller's own, in place of [Sticky] or [WeightedSticky]. Its result
// must give every resource of in.Resources to exactly one client of
// in.Clients and list nothing else (see [Validate]); it need not be
// balanced, nor list every client, nor sort the lists. An error means no
// assignment. A Func must not modify in.
type Func func(in Input) (Assignment, error)

// Validate checks that a gives every resource of resources to exactly one
// client of clients and lists no other client or resource, and returns it
// normalised: every client a key (an empty non-nil list for one owning
// nothing), each list sorted. Nothing else is required: unlike
// [Assignment.Check], the sizes of the lists may differ by any amount.
// Duplicate ids in clients or resources are ignored. The error wraps
// [ErrInvalid] and names the first fault found (in client id order, then
// resource order), and a is never modified.
func Validate(a Assignment, clients, resources []string) (Assignment, error) {
	cs := uniqueSorted(clients)
	rs := uniqueSorted(resources)
	out := make(Assignment, len(cs))
	for _, c := range cs {
		out[c] = []string{}
	}
	wanted := set(rs)
	owner := make(map[string]string, len(rs))
	for _, c := range a.Clients() {
		list := a[c]
		if _, ok := out[c]; !ok {
			if len(list) == 0 {
				return nil, fmt.Errorf("%w: unknown client %q", ErrInvalid, c)
			}
			return nil, fmt.Errorf("%w: unknown client %q owns %d resources (%s)", ErrInvalid, c, len(list), sample(sortedCopy(list)))
		}
		for _, r := range list {
			if !wanted[r] {
				return nil, fmt.Errorf("%w: client %q owns unknown resource %q", ErrInvalid, c, r)
			}
			if prev, dup := owner[r]; dup {
				if prev == c {
					return nil, fmt.Errorf("%w: client %q lists resource %q twice", ErrInvalid, c, r)
				}
				return nil, fmt.Errorf("%w: resource %q owned by both %q and %q", ErrInvalid, r, prev, c)
			}
			owner[r] = c
		}
		out[c] = sortedCopy(list)
	}
	if err := unowned(owner, rs); err != nil {
		return nil, err
	}
	return out, nil
}

// Covers reports whether a gives every resource of resources, and nothing
// else, to exactly one client of clients, as [Validate] requires, except
// that clients of a owning nothing are ignored, known or not: whether an
// allocation in force still matches a group, whatever its shares.
func (a Assignment) Covers(clients, resources []string) bool {
	owning := make(Assignment, len(a))
	for c, rs := range a {
		if len(rs) > 0 {
			owning[c] = rs
		}
	}
	_, err := Validate(owning, clients, resources)
	return err == nil
}

// Run calls f with in and validates its result: an error f returns, a
// panic in f or a result [Validate] refuses gives an error (wrapping
// [ErrInvalid] for the latter two) and no assignment.
func Run(f Func, in Input) (a Assignment, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = nil, fmt.Errorf("%w: allocation function panicked: %v", ErrInvalid, p)
		}
	}()
	// f gets copies: whatever it does to them, the result is checked
	// against what the caller gave.
	a, err = f(Input{Prev: in.Prev.Clone(), Clients: slices.Clone(in.Clients), Resources: slices.Clone(in.Resources),
		ClientWeights: maps.Clone(in.ClientWeights), ResourceWeights: maps.Clone(in.ResourceWeights)})
	if err != nil {
		return nil, fmt.Errorf("alloc: allocation function failed: %w", err)
	}
	return Validate(a, in.Clients, in.Resources)
}
