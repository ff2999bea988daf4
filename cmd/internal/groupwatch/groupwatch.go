// Package groupwatch follows a rebalancer group from outside, as zkcoord
// status --watch, a coordinating worker's metrics and the demo do: a
// description of the group after every change (Watch), and the
// rebalancings those descriptions show (Episodes).
package groupwatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/rebalance"
)

// Snapshot is one Describe of a group.
type Snapshot struct {
	At time.Time // when the Describe ended
	// Since is when the first notification of a change arrived after the
	// previous snapshot (zero for the first snapshot).
	Since time.Time
	D     *rebalance.Description // nil if the group does not exist (Err wraps ErrNoGroup)
	Err   error
}

// Watch calls f with a Description of the group now and after every
// change of its members, resources, allocation, barriers or term, until ctx
// ends or the Session ends. It uses one-shot watches, re-armed only on the
// nodes whose watch fired, and never polls. A burst of changes is described
// once. f is called from Watch's goroutine.
func Watch(ctx context.Context, sess *zkcoord.Session, root, group string, f func(Snapshot)) error {
	base := zkcoord.Join(root, group)
	type watchKey struct {
		path     string
		children bool
	}
	keys := []watchKey{
		{base, false},
		{zkcoord.Join(base, "clients"), true},
		{zkcoord.Join(base, "resources"), true},
		{zkcoord.Join(base, "resources"), false}, // the allocation
		{zkcoord.Join(base, "barriers"), true},
		{zkcoord.Join(base, "term"), false},
		{zkcoord.Join(base, "status"), false},
		{zkcoord.Join(base, "stopped"), true},
	}
	fired := make(chan watchKey, len(keys))
	armed := map[watchKey]bool{}
	arm := func(k watchKey) error {
		var ch <-chan zkcoord.Event
		var err error
		if k.children {
			_, _, ch, err = recipe.WatchChildren(ctx, sess, k.path)
		} else {
			_, _, ch, err = sess.ExistsW(ctx, k.path)
		}
		if err != nil {
			return err
		}
		armed[k] = true
		go func() {
			select {
			case <-ch:
				fired <- k
			case <-ctx.Done():
			}
		}()
		return nil
	}
	var since time.Time
	for {
		for _, k := range keys {
			if !armed[k] {
				if err := arm(k); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
			}
		}
		d, err := rebalance.Describe(ctx, sess, zkcoord.Join(root, group))
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && d == nil && !errors.Is(err, rebalance.ErrNoGroup) {
			if zkcoord.IsRetryable(err) && delay.Sleep(ctx, 100*time.Millisecond, nil) {
				continue
			}
			return err
		}
		f(Snapshot{At: time.Now(), Since: since, D: d, Err: err})
		select {
		case k := <-fired:
			since = time.Now()
			delete(armed, k)
		case <-ctx.Done():
			return nil
		case <-sess.Done():
			return sess.Err()
		}
		// Let a burst settle, then take every watch that fired meanwhile.
		t := time.NewTimer(20 * time.Millisecond)
	drain:
		for {
			select {
			case k := <-fired:
				delete(armed, k)
			case <-t.C:
				break drain
			case <-ctx.Done():
				t.Stop()
				return nil
			}
		}
	}
}

// An Episode is one rebalancing as seen from outside: from the first Snapshot
// in which the group is not settled to the first in which it is again.
type Episode struct {
	N          int
	Start, End time.Time
	Trigger    string // what changed: members joined or left, resources added or removed
	Moved      int    // resources whose holder changed, or that found their first holder
	Term       int64
	Generation int64
	Coord      string // the coordinator's name at the end
}

// Duration is how long the rebalancing took.
func (e Episode) Duration() time.Duration { return e.End.Sub(e.Start) }

// Episodes turns a stream of snapshots into rebalancings. The zero value
// watches a group from its start; Joined says that the stream starts in
// the middle of the group's life, so that a settled first snapshot is a
// state found, not a rebalancing seen.
type Episodes struct {
	Joined  bool
	n       int
	settled *rebalance.Description // the last settled state
	cur     *Episode
}

// Observe takes the next Snapshot. It returns the rebalancing that it
// completes, if any.
func (t *Episodes) Observe(s Snapshot) *Episode {
	d := s.D
	if d == nil {
		return nil
	}
	start := s.Since
	if start.IsZero() {
		start = s.At
	}
	busy := d.Rebalancing || len(d.Unallocated) > 0
	if busy {
		if t.cur == nil {
			t.n++
			t.cur = &Episode{N: t.n, Start: start}
		}
		return nil
	}
	if t.cur == nil {
		if t.settled == nil || t.settled.Generation != d.Generation || !sameHolders(t.settled, d) {
			// A whole rebalancing happened between two snapshots: it
			// started with the change that woke us.
			if t.settled != nil || (len(d.Resources) > 0 && !t.Joined) {
				t.n++
				t.cur = &Episode{N: t.n, Start: start}
			}
		}
	}
	var done *Episode
	if t.cur != nil {
		e := t.cur
		e.End = s.At
		e.Trigger = describeChange(t.settled, d)
		e.Moved = movedCount(t.settled, d)
		e.Term, e.Generation = d.Term, d.Generation
		e.Coord = MemberName(d, d.Coordinator)
		done, t.cur = e, nil
	}
	t.settled = d
	return done
}

// holders maps every resource to the name of the member holding its barrier.
func holders(d *rebalance.Description) map[string]string {
	out := map[string]string{}
	if d == nil {
		return out
	}
	for _, b := range d.Barriers {
		out[b.Resource] = MemberName(d, b.Client)
	}
	return out
}

func sameHolders(a, b *rebalance.Description) bool {
	return maps.Equal(holders(a), holders(b))
}

func movedCount(before, after *rebalance.Description) int {
	hb, ha := holders(before), holders(after)
	n := 0
	for r, h := range ha {
		if hb[r] != h {
			n++
		}
	}
	return n
}

// MemberName returns a member's name (its --name), or its client id.
func MemberName(d *rebalance.Description, id string) string {
	for _, m := range d.Members {
		if m.ID == id {
			if m.Name != "" {
				return m.Name
			}
			return m.ID
		}
	}
	return id
}

// describeChange says what differs between two settled states.
func describeChange(before, after *rebalance.Description) string {
	names := func(d *rebalance.Description) []string {
		if d == nil {
			return nil
		}
		var out []string
		for _, m := range d.Members {
			out = append(out, MemberName(d, m.ID))
		}
		return out
	}
	var res []string
	if before != nil {
		res = before.Resources
	}
	joined, left := diff(names(before), names(after))
	added, removed := diff(res, after.Resources)
	for _, l := range [][]string{joined, left, added, removed} {
		slices.Sort(l)
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"joined", joined}, {"left", left}, {"added", added}, {"removed", removed}} {
		switch n := len(p.names); {
		case n > 4 && (p.what == "added" || p.what == "removed"):
			parts = append(parts, fmt.Sprintf("%s %d resources", p.what, n))
		case n > 4:
			parts = append(parts, fmt.Sprintf("%d members %s", n, p.what))
		case n > 0:
			parts = append(parts, p.what+" "+strings.Join(p.names, " "))
		}
	}
	if len(parts) == 0 {
		return "reassigned"
	}
	return strings.Join(parts, "; ")
}

// diff returns what is only in b (added) and only in a (removed).
func diff(a, b []string) (added, removed []string) {
	for _, x := range b {
		if !slices.Contains(a, x) {
			added = append(added, x)
		}
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			removed = append(removed, x)
		}
	}
	return added, removed
}
