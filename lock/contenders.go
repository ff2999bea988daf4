package lock

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Lock names: the part of a node name between the protected prefix and the
// sequence number. They are Apache Curator's, so that Curator and zkcoord
// clients contend for the same locks. Kazoo's Lock names its nodes
// "<32 hex digits>__lock__<seq>"; a Mutex recognises those too.
const (
	mutexName = "lock-"    // InterProcessMutex
	readName  = "__READ__" // InterProcessReadWriteLock, read side
	writeName = "__WRIT__" // InterProcessReadWriteLock, write side
	leaseName = "lease-"   // InterProcessSemaphoreV2 leases
	kazooName = "__lock__" // kazoo.recipe.lock.Lock
)

// contender is one recognised lock node of a lock directory.
type contender struct {
	name   string // node name, no directory
	key    string // what contenders are ordered by
	writer bool   // excludes everyone after it (always true for a Mutex)
}

// afterLast returns the text after the last occurrence of lockName in name,
// or name itself if lockName does not occur. This is how Curator's
// StandardLockInternalsDriver.fixForSorting derives the string by which it
// orders contenders.
func afterLast(name, lockName string) string {
	i := strings.LastIndex(name, lockName)
	if i < 0 {
		return name
	}
	return name[i+len(lockName):]
}

// isSeq reports whether s is a sequence suffix ZooKeeper can produce: the
// parent's 32-bit signed counter printed with %010d. Past 2^31-1 the counter
// wraps to negative values, printed as "-2147483648" (11 characters) up to
// "-000000001" (10 characters).
func isSeq(s string) bool {
	if len(s) != 10 && len(s) != 11 {
		return false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return false
	}
	return formatSeq(int32(n)) == s
}

// formatSeq prints n as ZooKeeper prints sequence numbers (Java's
// "%010d", which like Go's pads with zeros after the sign).
func formatSeq(n int32) string { return fmt.Sprintf("%010d", n) }

// mutexContender recognises a Mutex contender: Curator's (and zkcoord's)
// "..lock-<seq>", ordered by the text after the last "lock-", or Kazoo's
// "..__lock__<seq>", ordered by its sequence number (which is how Kazoo
// orders, and the same string Curator would compare).
func mutexContender(name string) (contender, bool) {
	if strings.Contains(name, mutexName) {
		if k := afterLast(name, mutexName); isSeq(k) {
			return contender{name: name, key: k, writer: true}, true
		}
	}
	if strings.Contains(name, kazooName) {
		if k := afterLast(name, kazooName); isSeq(k) {
			return contender{name: name, key: k, writer: true}, true
		}
	}
	return contender{}, false
}

// rwContender recognises a read or write contender the way Curator's
// InterProcessReadWriteLock does: the order key is the text after the last
// "__READ__", and of that the text after the last "__WRIT__"; a node whose
// name contains "__WRIT__" anywhere is a writer.
func rwContender(name string) (contender, bool) {
	if !strings.Contains(name, readName) && !strings.Contains(name, writeName) {
		return contender{}, false
	}
	k := afterLast(afterLast(name, readName), writeName)
	if !isSeq(k) {
		return contender{}, false
	}
	return contender{name: name, key: k, writer: strings.Contains(name, writeName)}, true
}

// leaseContender recognises a semaphore lease node.
func leaseContender(name string) (contender, bool) {
	if !strings.Contains(name, leaseName) {
		return contender{}, false
	}
	k := afterLast(name, leaseName)
	if !isSeq(k) {
		return contender{}, false
	}
	return contender{name: name, key: k, writer: true}, true
}

// less orders contenders as Curator does: by comparing keys as strings.
// Keys are ASCII, so Go's byte order equals Java's String.compareTo. Equal
// keys (possible only after the counter wrapped all the way round) fall
// back to the full name, so that every client agrees on one order.
func less(a, b contender) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.name < b.name
}

// sortContenders keeps the children that recognise reports as contenders,
// in lock order. Other children are ignored.
func sortContenders(children []string, recognise func(string) (contender, bool)) []contender {
	out := make([]contender, 0, len(children))
	for _, c := range children {
		if ct, ok := recognise(c); ok {
			out = append(out, ct)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// blocker returns the contender that the node "me" must wait for, or ""
// when me holds the lock. found is false when me is not among children.
//
// A writer (a Mutex node, or the write side of an RWMutex) holds the lock
// when it is first and otherwise waits for the contender just before it. A
// reader holds when no writer precedes it and otherwise waits for the
// nearest writer before it. Each waiter watches one node, and a node's
// deletion wakes only the waiters watching it: no herd.
func blocker(sorted []contender, me string) (wait string, found bool) {
	idx := -1
	for i, c := range sorted {
		if c.name == me {
			idx = i
			break
		}
	}
	if idx < 0 {
		return "", false
	}
	if sorted[idx].writer {
		if idx == 0 {
			return "", true
		}
		return sorted[idx-1].name, true
	}
	for i := idx - 1; i >= 0; i-- {
		if sorted[i].writer {
			return sorted[i].name, true
		}
	}
	return "", true
}
