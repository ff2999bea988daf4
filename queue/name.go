package queue

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zkcoord/zkcoord"
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
	if seq, ok := parseSeq(rest); ok {
		return item{name: name, seq: seq}, true
	}
	p, s, ok := strings.Cut(rest, "-")
	if !ok || len(p) != 3 {
		return item{}, false
	}
	prio, err := strconv.Atoi(p)
	if err != nil || prio < MinPriority || prio > MaxPriority || p[0] == '+' || p[0] == '-' {
		return item{}, false
	}
	seq, ok := parseSeq(s)
	if !ok {
		return item{}, false
	}
	return item{name: name, priority: prio, seq: seq}, true
}

// parseSeq parses a ZooKeeper sequence suffix: a signed 32-bit number
// printed with %010d ("0000000042", "-2147483648").
func parseSeq(s string) (int32, bool) {
	if len(s) < 10 || len(s) > 11 {
		return 0, false
	}
	for i, c := range s {
		if !(c >= '0' && c <= '9' || i == 0 && c == '-') {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || fmt.Sprintf("%010d", n) != s {
		return 0, false
	}
	return int32(n), true
}

// sortItems orders items for serving: by priority, then by sequence number
// in serial-number order (see the package documentation).
func sortItems(items []item) {
	base := serialBase(items)
	slices.SortFunc(items, func(a, b item) int {
		if a.priority != b.priority {
			return a.priority - b.priority
		}
		da, db := uint32(a.seq)-base, uint32(b.seq)-base
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
}

// serialBase returns the oldest sequence number of the items, reading the
// 2^32 circle of sequence numbers from just after its largest empty gap.
func serialBase(items []item) uint32 {
	if len(items) == 0 {
		return 0
	}
	seqs := make([]uint32, len(items))
	for i, it := range items {
		seqs[i] = uint32(it.seq)
	}
	slices.Sort(seqs)
	// The gap that wraps from the largest number back to the smallest.
	base := seqs[0]
	gap := seqs[0] - seqs[len(seqs)-1] // modulo 2^32
	for i := 1; i < len(seqs); i++ {
		if g := seqs[i] - seqs[i-1]; g > gap {
			gap, base = g, seqs[i]
		}
	}
	return base
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
