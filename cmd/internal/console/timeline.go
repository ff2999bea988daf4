package console

import (
	"fmt"
	"slices"
	"strings"
)

// maxMoves is how many moved resources one timeline entry names.
const maxMoves = 12

// changes describes what happened between two views of one recipe, for
// the timeline: leader changes, rebalancings with what moved, locks
// granted. prev is nil when the recipe was just found.
func changes(prev, next *View) []string {
	if next.Error != "" {
		if prev == nil || prev.Error != next.Error {
			return []string{"cannot read: " + next.Error}
		}
		return nil
	}
	if prev == nil || prev.Error != "" {
		return []string{"found " + string(next.Kind) + describe(next)}
	}
	switch {
	case next.Election != nil && prev.Election != nil:
		return electionChanges(prev.Election, next.Election)
	case next.Lock != nil && prev.Lock != nil:
		return lockChanges(prev.Lock, next.Lock)
	case next.Group != nil && prev.Group != nil:
		return groupChanges(prev.Group, next.Group)
	case next.Service != nil && prev.Service != nil:
		return serviceChanges(prev.Service, next.Service)
	case next.Membership != nil && prev.Membership != nil:
		return membershipChanges(prev.Membership, next.Membership)
	case next.Barrier != nil && prev.Barrier != nil:
		if prev.Barrier.Set != next.Barrier.Set && next.Kind == KindBarrier {
			return []string{map[bool]string{true: "barrier set", false: "barrier removed"}[next.Barrier.Set]}
		}
		if !prev.Barrier.Ready && next.Barrier.Ready {
			return []string{fmt.Sprintf("ready with %d members", len(next.Barrier.Members))}
		}
	}
	return nil
}

// describe gives a short summary of a view just found.
func describe(v *View) string {
	switch {
	case v.Election != nil && v.Election.Leader != nil:
		return ": leader " + who(*v.Election.Leader)
	case v.Lock != nil && len(v.Lock.Holders) > 0:
		return ": held by " + who(v.Lock.Holders[0])
	case v.Group != nil:
		return fmt.Sprintf(": %d members, %d resources, generation %d", len(v.Group.Members), v.Group.Resources, v.Group.Generation)
	case v.Service != nil:
		return ": " + count(len(v.Service.Instances), "instance")
	case v.Membership != nil:
		return ": " + count(len(v.Membership.Members), "member")
	}
	return ""
}

// count gives n things, in the singular for one.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// who names a contender by its id if it has one, else by its session.
func who(c Contender) string {
	if c.ID != "" {
		return fmt.Sprintf("%s (session %s, token %d)", c.ID, c.Session, c.Token)
	}
	return fmt.Sprintf("session %s (token %d)", c.Session, c.Token)
}

func electionChanges(prev, next *ElectionView) []string {
	var out []string
	switch {
	case next.Leader == nil && prev.Leader != nil:
		out = append(out, "no leader (was "+who(*prev.Leader)+")")
	case next.Leader != nil && (prev.Leader == nil || prev.Leader.Node != next.Leader.Node):
		out = append(out, "leader: "+who(*next.Leader))
	}
	if next.Acting && !prev.Acting && next.Leader != nil {
		out = append(out, fmt.Sprintf("leader %s acting, term %d", next.Leader.ID, next.Term))
	}
	return out
}

// listChanges compares two lists of entries told apart by key and says,
// in list order, joined(e) of each entry of next that prev lacks,
// changed(was, e) of each entry in both, and left(e) of each entry of prev
// that next lacks. changed and left may be nil; an empty string says
// nothing.
func listChanges[T any](prev, next []T, key func(T) string,
	joined func(T) string, changed func(was, is T) string, left func(T) string) []string {
	var out []string
	say := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	was := map[string]T{}
	for _, e := range prev {
		was[key(e)] = e
	}
	is := map[string]bool{}
	for _, e := range next {
		is[key(e)] = true
		old, ok := was[key(e)]
		switch {
		case !ok:
			say(joined(e))
		case changed != nil:
			say(changed(old, e))
		}
	}
	for _, e := range prev {
		if left != nil && !is[key(e)] {
			say(left(e))
		}
	}
	return out
}

func lockChanges(prev, next *LockView) []string {
	out := listChanges(prev.Holders, next.Holders, func(h Contender) string { return h.Node },
		func(h Contender) string { return "granted to " + who(h) }, nil, nil)
	if len(next.Holders) == 0 && len(prev.Holders) > 0 {
		out = append(out, "released")
	}
	return out
}

func groupChanges(prev, next *GroupView) []string {
	name := memberNames(prev.Members, next.Members)
	out := listChanges(prev.Members, next.Members, func(m Member) string { return m.ID },
		func(m Member) string { return "member " + name(m.ID) + " joined" }, nil,
		func(m Member) string { return "member " + name(m.ID) + " left" })
	if next.Coordinator != prev.Coordinator && next.Coordinator != "" {
		out = append(out, "coordinator: "+name(next.Coordinator))
	}
	if next.Generation != prev.Generation {
		out = append(out, fmt.Sprintf("rebalanced: generation %d, %s", next.Generation, moved(prev.Allocation, next.Allocation, name)))
	}
	if next.Rebalancing != prev.Rebalancing && !next.Rebalancing {
		out = append(out, fmt.Sprintf("settled: every resource held by its owner (generation %d)", next.Generation))
	}
	return out
}

// memberNames returns how the timeline names a member of either list: by
// its name (--name, or host and pid) when it has one, else by its id.
func memberNames(lists ...[]Member) func(id string) string {
	names := map[string]string{}
	for _, ms := range lists {
		for _, m := range ms {
			if m.Name != "" {
				names[m.ID] = m.Name
			}
		}
	}
	return func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return id
	}
}

// moved lists the resources whose owner changed between two allocations,
// naming the owners with name.
func moved(prev, next map[string][]string, name func(id string) string) string {
	owner := func(a map[string][]string) map[string]string {
		o := map[string]string{}
		for c, rs := range a {
			for _, r := range rs {
				o[r] = c
			}
		}
		return o
	}
	was, is := owner(prev), owner(next)
	var rs []string
	for r := range is {
		if was[r] != is[r] {
			rs = append(rs, r)
		}
	}
	for r := range was {
		if _, ok := is[r]; !ok {
			rs = append(rs, r)
		}
	}
	slices.Sort(rs)
	if len(rs) == 0 {
		return "nothing moved"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d moved:", len(rs))
	for i, r := range rs {
		if i == maxMoves {
			fmt.Fprintf(&b, " and %d more", len(rs)-maxMoves)
			break
		}
		fmt.Fprintf(&b, " %s %s→%s", r, orNone(name, was[r]), orNone(name, is[r]))
	}
	return b.String()
}

// orNone names the member id with name, or says "none" for no member.
func orNone(name func(string) string, id string) string {
	if id == "" {
		return "none"
	}
	return name(id)
}

// serviceChanges: instances registered and unregistered, disabled and
// enabled again, moved to another address.
func serviceChanges(prev, next *ServiceView) []string {
	return listChanges(prev.Instances, next.Instances, func(in Instance) string { return in.Node },
		func(in Instance) string { return "instance " + in.ID + " registered" + at(in) },
		func(old, in Instance) string {
			switch {
			case old.Disabled != in.Disabled:
				return "instance " + in.ID + map[bool]string{true: " disabled", false: " enabled"}[in.Disabled]
			case at(old) != at(in):
				return "instance " + in.ID + " now" + at(in)
			}
			return ""
		},
		func(in Instance) string { return "instance " + in.ID + " unregistered" })
}

// at gives an instance's address and ports.
func at(in Instance) string {
	s := ""
	if in.Address != "" || in.Port != 0 {
		s = fmt.Sprintf(" at %s:%d", in.Address, in.Port)
	}
	if in.SSLPort != 0 {
		s += fmt.Sprintf(" (ssl %d)", in.SSLPort)
	}
	return s
}

// membershipChanges: members joined and left.
func membershipChanges(prev, next *MembershipView) []string {
	return listChanges(prev.Members, next.Members, func(mb GroupMember) string { return mb.Node },
		func(mb GroupMember) string { return fmt.Sprintf("member %s joined (session %s)", mb.ID, mb.Session) }, nil,
		func(mb GroupMember) string { return "member " + mb.ID + " left" })
}
