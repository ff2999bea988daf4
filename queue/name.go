package queue

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/seq"
)

// Item names.
const (
	itemPrefix  = "queue-"
	claimsNode  = "claims"
	MinPriority = 0
	MaxPriority = 999
)

// item is one parsed child of the queue node.
type item struct {
	name     string // the child's full name
	priority int
	seq      int32
}

// itemName returns the name (before the protected prefix and the sequence
// number, which ZooKeeper adds) of an item with the given priority; a
// negative priority means a plain FIFO item.
func itemName(priority int) string {
	if priority < 0 {
		return itemPrefix
	}
	return fmt.Sprintf("%s%03d-", itemPrefix, priority)
}

// parseItem parses a child name, reporting false for names that are not
// items of this package.
func parseItem(name string) (item, bool) {
	rest, ok := strings.CutPrefix(zkcoord.StripProtected(name), itemPrefix)
	if !ok {
		return item{}, false
	}
	if n, ok := seq.Parse(rest); ok {
		return item{name: name, seq: n}, true
	}
	p, s, ok := strings.Cut(rest, "-")
	if !ok || len(p) != 3 {
		return item{}, false
	}
	prio, err := strconv.Atoi(p)
	if err != nil || prio < MinPriority || prio > MaxPriority || p[0] == '+' || p[0] == '-' {
		return item{}, false
	}
	n, ok := seq.Parse(s)
	if !ok {
		return item{}, false
	}
	return item{name: name, priority: prio, seq: n}, true
}

// sortItems orders items for serving: by priority, then by sequence number
// in the serial order of all items present (see the package
// documentation).
func sortItems(items []item) {
	order := seq.SerialBy(items, func(x item) int32 { return x.seq })
	slices.SortFunc(items, func(a, b item) int {
		return cmp.Or(
			cmp.Compare(a.priority, b.priority),
			order.Compare(a.seq, b.seq),
			strings.Compare(a.name, b.name),
		)
	})
}

// parseItems returns the items among children, in serving order.
func parseItems(children []string) []item {
	items := make([]item, 0, len(children))
	for _, c := range children {
		if it, ok := parseItem(c); ok {
			items = append(items, it)
		}
	}
	sortItems(items)
	return items
}
