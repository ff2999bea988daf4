package lock

import (
	"slices"
	"strings"

	"github.com/zkcoord/zkcoord/internal/seq"
)

// Lock names: the part of a node name between the protected prefix and the
// sequence number. They are Apache Curator's, so that Curator and zkcoord
// clients contend for the same locks. Kazoo's Lock names its nodes
// "<32 hex digits>__lock__<seq>"; a Mutex recognises those too.
const (
	mutexName = "lock-"     // InterProcessMutex
	readName  = "__READ__"  // InterProcessReadWriteLock, read side
	writeName = "__WRIT__"  // InterProcessReadWriteLock, write side
	leaseName = "lease-"    // InterProcessSemaphoreV2 leases
	kazooName = "__lock__"  // kazoo.recipe.lock.Lock and WriteLock
	kazooRead = "__rlock__" // kazoo.recipe.lock.ReadLock
)

// contender is one recognised lock node of a lock directory, keyed for
// the Curator order (see the package documentation).
type contender struct {
	seq.Keyed      // node name, no directory, and what it is ordered by
	writer    bool // excludes everyone after it (always true for a Mutex)
}

// keyed returns the contender named name with the key that Curator (and,
// for its own nodes, Kazoo) orders it by, if that key is a sequence suffix
// ZooKeeper can produce.
func keyed(name, key string, writer bool) (contender, bool) {
	if _, ok := seq.Parse(key); !ok {
		return contender{}, false
	}
	return contender{Keyed: seq.Keyed{Name: name, Key: key}, writer: writer}, true
}

// mutexContender recognises a Mutex contender: Curator's (and zkcoord's)
// "..lock-<seq>", keyed by the text after the last "lock-", or Kazoo's
// "..__lock__<seq>", keyed by its sequence suffix, which is what Kazoo
// compares (and the same string Curator would compare).
func mutexContender(name string) (contender, bool) {
	if strings.Contains(name, mutexName) {
		if c, ok := keyed(name, seq.After(name, mutexName), true); ok {
			return c, true
		}
	}
	if strings.Contains(name, kazooName) {
		return keyed(name, seq.After(name, kazooName), true)
	}
	return contender{}, false
}

// rwContender recognises a read or write contender the way Curator's
// InterProcessReadWriteLock does: the order key is the text after the last
// "__READ__", and of that the text after the last "__WRIT__"; a node whose
// name contains "__WRIT__" anywhere is a writer.
//
// Kazoo's ReadLock ("<hex>__rlock__<seq>") and WriteLock ("<hex>__lock__<seq>")
// nodes are recognised too, keyed by their sequence suffix as Kazoo keys
// them, so that Kazoo's read/write locks and an RWMutex share one lock.
func rwContender(name string) (contender, bool) {
	if !strings.Contains(name, readName) && !strings.Contains(name, writeName) {
		if strings.Contains(name, kazooRead) {
			return keyed(name, seq.After(name, kazooRead), false)
		}
		if strings.Contains(name, kazooName) {
			return keyed(name, seq.After(name, kazooName), true)
		}
		return contender{}, false
	}
	return keyed(name, seq.After(seq.After(name, readName), writeName), strings.Contains(name, writeName))
}

// leaseContender recognises a semaphore lease node.
func leaseContender(name string) (contender, bool) {
	if !strings.Contains(name, leaseName) {
		return contender{}, false
	}
	return keyed(name, seq.After(name, leaseName), true)
}

// Kinds of lock, as ErrOtherKind's message names them. A Mutex and an
// RWMutex keep their contenders in the lock directory itself, a Semaphore
// in its subdirectories locks/ and leases/ (see semaphoreDirs).
const (
	mutexKind          = "mutex"
	rwKind             = "read/write lock"
	semaphoreKind      = "semaphore"
	kazooSemaphoreKind = "Kazoo semaphore"
)

// kindsInDir are the kinds of lock whose contenders are children of the
// lock directory, with how each recognises its own. A Semaphore in
// Kazoo's layout (WithKazooLayout) is a kind of its own: its leases are
// children of the semaphore node.
var kindsInDir = []struct {
	kind      string
	recognise func(string) (contender, bool)
}{
	{mutexKind, mutexContender},
	{rwKind, rwContender},
	{kazooSemaphoreKind, kazooLeaseContender}, // leases, in the semaphore node
}

// semaphoreDirs are a Semaphore's subdirectories, and the contenders each
// holds: acquirers waiting in turn in locks/, leases in leases/. In this
// order: an acquirer creates its lease before it deletes its node in
// locks/, so listing locks/ and then leases/ cannot miss it.
var semaphoreDirs = []subdir{
	{"locks", mutexContender},
	{"leases", leaseContender},
}

// subdir is a subdirectory of a lock directory and what its contenders
// are called.
type subdir struct {
	name      string
	recognise func(string) (contender, bool)
}

// otherKind returns the first of children that a lock of another kind
// than mine takes for one of its contenders while mine does not, and that
// kind. Kazoo's "__lock__" nodes belong to both its Lock and its
// WriteLock, so a Mutex and an RWMutex each take them for their own.
func otherKind(children []string, mine string) (node, kind string) {
	for _, name := range children {
		own, other := false, ""
		for _, k := range kindsInDir {
			if _, ok := k.recognise(name); ok {
				if k.kind == mine {
					own = true
				} else if other == "" {
					other = k.kind
				}
			}
		}
		if !own && other != "" {
			return name, other
		}
	}
	return "", ""
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
	slices.SortFunc(out, func(a, b contender) int { return seq.CompareCurator(a.Keyed, b.Keyed) })
	return out
}

// wrapped returns the first of contenders whose sequence number is
// negative, "" if none is: a directory whose counter wrapped, where the
// order of the contenders is no longer creation order.
func wrapped(contenders []contender) string {
	for _, c := range contenders {
		if seq.Wrapped(c.Key) {
			return c.Name
		}
	}
	return ""
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
		if c.Name == me {
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
		return sorted[idx-1].Name, true
	}
	for i := idx - 1; i >= 0; i-- {
		if sorted[i].writer {
			return sorted[i].Name, true
		}
	}
	return "", true
}
