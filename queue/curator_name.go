package queue

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord/internal/seq"
)

// layout is one of the node layouts of Curator's queues. Every item is a
// persistent sequential child of the queue node, named with a prefix and,
// for some layouts, a key before the sequence number that ZooKeeper
// appends; see docs/protocol.md#curators-queues.
type layout int

const (
	fifoLayout     layout = iota // DistributedQueue: queue-<seq>
	priorityLayout               // DistributedPriorityQueue: queue-<s><8 hex><seq>
	delayLayout                  // DistributedDelayQueue: queue-|<hex millis>|<seq>
	idLayout                     // DistributedIdQueue: queue-|<id>|<seq>
	simpleLayout                 // SimpleDistributedQueue: qn-<seq>
)

// simplePrefix names SimpleDistributedQueue's items; the others use
// itemPrefix, "queue-".
const simplePrefix = "qn-"

// curatorSep brackets the key of a delay or id item.
const curatorSep = "|"

func (l layout) String() string {
	return [...]string{"DistributedQueue", "DistributedPriorityQueue", "DistributedDelayQueue",
		"DistributedIdQueue", "SimpleDistributedQueue"}[l]
}

// prefix is what every item's name starts with; Curator takes other
// children for foreign nodes and leaves them alone.
func (l layout) prefix() string {
	if l == simpleLayout {
		return simplePrefix
	}
	return itemPrefix
}

// fresh reports whether takers list again after every take, as Curator's
// priority and delay queues refresh after every item when the children
// changed: an item put meanwhile may come first.
func (l layout) fresh() bool { return l == priorityLayout || l == delayLayout }

// priorityName is the name before the sequence number of an item of the
// given priority: "1" for a priority of zero or more, "0" below, then the
// priority's 32 bits in eight upper-case hexadecimal digits, so that the
// names sort as strings by priority, lower first.
func priorityName(priority int32) string {
	sign := "1"
	if priority < 0 {
		sign = "0"
	}
	return fmt.Sprintf("%s%s%08X", itemPrefix, sign, uint32(priority))
}

// delayName is the name before the sequence number of an item due at
// millis (milliseconds since the Unix epoch, above zero): at least eight
// upper-case hexadecimal digits between two separators.
func delayName(millis int64) string {
	return fmt.Sprintf("%s%s%08X%s", itemPrefix, curatorSep, millis, curatorSep)
}

// idName is the name before the sequence number of an item with id, in
// which "/" and the separator become "_" as in Curator.
func idName(id string) string {
	return itemPrefix + curatorSep + cleanID(id) + curatorSep
}

// cleanID replaces what cannot stand in an id item's name, as Curator
// does.
func cleanID(id string) string {
	return strings.NewReplacer("/", "_", curatorSep, "_").Replace(id)
}

// dueMillis reads the time a delay item is due, in milliseconds since the
// Unix epoch, as Curator does: the hexadecimal number between the last two
// separators, the first of them not at the start of the name; a name
// without one is due at 0, that is at once.
func dueMillis(name string) int64 {
	end := strings.LastIndex(name, curatorSep)
	if end <= 0 {
		return 0
	}
	start := strings.LastIndex(name[:end], curatorSep)
	if start <= 0 || end <= start+1 {
		return 0
	}
	n, err := strconv.ParseInt(name[start+1:end], 16, 64)
	if err != nil {
		return 0
	}
	return n
}

// splitID splits an id item's name, as Curator does, into its id (the text
// between the first two separators) and the rest (the name without the id
// and its separators), by which id items are served. A name with fewer
// than two separators is its own id and rest.
func splitID(name string) (id, rest string) {
	before, after, ok := strings.Cut(name, curatorSep)
	if !ok {
		return name, name
	}
	id, after, ok = strings.Cut(after, curatorSep)
	if !ok {
		return name, name
	}
	return id, before + after
}

// sort puts names in the order Curator serves them: as Java strings
// (FIFO, priority, simple), by the name without its id (id), or by due
// time (delay; Curator leaves items due at the same time in the server's
// order, which is arbitrary, and here the names, as strings, decide).
func (l layout) sort(names []string) {
	switch l {
	case idLayout:
		keyed := make([]seq.Keyed, len(names))
		for i, n := range names {
			_, rest := splitID(n)
			keyed[i] = seq.Keyed{Name: n, Key: rest}
		}
		slices.SortFunc(keyed, seq.CompareCurator)
		for i, k := range keyed {
			names[i] = k.Name
		}
	case delayLayout:
		type due struct {
			name string
			at   int64
		}
		ds := make([]due, len(names))
		for i, n := range names {
			ds[i] = due{n, dueMillis(n)}
		}
		slices.SortFunc(ds, func(a, b due) int {
			return cmp.Or(cmp.Compare(a.at, b.at), seq.CompareText(a.name, b.name))
		})
		for i, d := range ds {
			names[i] = d.name
		}
	default:
		slices.SortFunc(names, seq.CompareText)
	}
}

// due splits names, sorted, into those due at now and the time the next
// of the others is due (zero if none). Only delay items wait.
func (l layout) due(names []string, now time.Time) (ready []string, next time.Time) {
	if l != delayLayout {
		return names, time.Time{}
	}
	ms := now.UnixMilli()
	for i, n := range names {
		if at := dueMillis(n); at > ms {
			return names[:i], time.UnixMilli(at)
		}
	}
	return names, time.Time{}
}
