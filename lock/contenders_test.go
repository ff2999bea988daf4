package lock

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/zkcoord/zkcoord/internal/seq"
)

// The reference model below restates Curator's lock predicates
// (LockInternals and InterProcessReadWriteLock) on top of Curator's sort,
// which internal/seq provides and checks against Java's string comparison
// (and TestOrderMatchesCuratorItself against Curator's own code): the text
// after the last occurrence of the lock name, compared as a Java string.

func curatorKey(name, lockName string) string { return seq.After(name, lockName) }

// curatorSort sorts children as Curator's LockInternals.getSortedChildren.
func curatorSort(children []string, key func(string) string) []string {
	out := slices.Clone(children)
	sort.SliceStable(out, func(i, j int) bool { return seq.CompareText(key(out[i]), key(out[j])) < 0 })
	return out
}

func names(cs []contender) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

const protected = "_c_0b5d8a59-3b0e-4a3c-9d36-1b1f4bd0b6a1-"

func TestOrderAcrossTheWrap(t *testing.T) {
	// ZooKeeper numbers children with a signed 32-bit counter; Curator
	// compares the printed numbers as strings, so after the wrap the
	// order is not numeric. zkcoord must agree with Curator exactly.
	seqs := []int32{1, math.MinInt32, math.MaxInt32, -1, -999999999, -1000000000, 0, 10, -2147483647}
	want := []string{
		"-000000001", "-1000000000", "-2147483647", "-2147483648", "-999999999",
		"0000000000", "0000000001", "0000000010", "2147483647",
	}
	var children []string
	for _, s := range seqs {
		children = append(children, protected+"lock-"+seq.Format(s))
	}
	got := sortContenders(children, mutexContender)
	if len(got) != len(want) {
		t.Fatalf("recognised %d of %d", len(got), len(want))
	}
	for i, c := range got {
		if c.Key != want[i] {
			t.Errorf("position %d: %s, want %s", i, c.Key, want[i])
		}
	}
	if ref := curatorSort(children, func(s string) string { return curatorKey(s, "lock-") }); !slices.Equal(names(got), ref) {
		t.Errorf("order differs from Curator's:\n got %v\nwant %v", names(got), ref)
	}
}

func TestMutexContender(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  string // "" = not a contender
	}{
		{protected + "lock-0000000007", "0000000007"},
		{protected + "lock--2147483648", "-2147483648"},
		{"lock-0000000007", "0000000007"},                                    // unprotected Curator-style
		{"0123456789abcdef0123456789abcdef__lock__0000000003", "0000000003"}, // Kazoo
		{"0123456789abcdef0123456789abcdef__lock__-000000003", "-000000003"}, // Kazoo after the wrap
		{"lock-0000000001-lock-0000000002", "0000000002"},                    // the last occurrence counts
		{"x-lock-0000000001__lock__0000000002", "0000000002"},                // Curator key invalid, Kazoo key valid
		{"readme", ""},
		{"lock-", ""},
		{"lock-abc", ""},
		{"lock-0000000001-x", ""},
		{protected + "__READ__0000000001", ""},
		{protected + "lease-0000000001", ""},
		{"0000000001", ""},
	} {
		c, ok := mutexContender(tc.name)
		if ok != (tc.key != "") || (ok && c.Key != tc.key) {
			t.Errorf("mutexContender(%q) = %q, %v; want %q", tc.name, c.Key, ok, tc.key)
		}
	}
}

func TestRWContender(t *testing.T) {
	for _, tc := range []struct {
		name   string
		key    string
		writer bool
	}{
		{protected + "__READ__0000000001", "0000000001", false},
		{protected + "__WRIT__0000000002", "0000000002", true},
		{protected + "__WRIT__-2147483648", "-2147483648", true},
		{"a__WRIT__b__READ__0000000003", "0000000003", true}, // Curator: contains __WRIT__ → writer
		{"a__READ__b__WRIT__0000000004", "0000000004", true},
		{protected + "lock-0000000001", "", false},
		{"__READ__", "", false},
		{"__WRIT__12", "", false},
	} {
		c, ok := rwContender(tc.name)
		if ok != (tc.key != "") || (ok && (c.Key != tc.key || c.writer != tc.writer)) {
			t.Errorf("rwContender(%q) = %+v, %v; want key %q writer %v", tc.name, c, ok, tc.key, tc.writer)
		}
	}
}

func TestBlocker(t *testing.T) {
	r := func(s string) string { return protected + "__READ__" + s }
	w := func(s string) string { return protected + "__WRIT__" + s }
	children := []string{
		w("0000000004"), r("0000000001"), r("0000000002"), r("0000000005"),
		w("0000000006"), r("0000000007"), "foreign", r("-000000001"),
	}
	sorted := sortContenders(children, rwContender)
	for _, tc := range []struct{ me, want string }{
		{r("-000000001"), ""}, // sorts first after the wrap
		{r("0000000001"), ""},
		{r("0000000002"), ""},
		{w("0000000004"), r("0000000002")}, // a writer waits for its predecessor
		{r("0000000005"), w("0000000004")}, // a reader for the nearest writer
		{w("0000000006"), r("0000000005")},
		{r("0000000007"), w("0000000006")},
	} {
		got, found := blocker(sorted, tc.me)
		if !found || got != tc.want {
			t.Errorf("blocker(%s) = %q, %v; want %q", tc.me, got, found, tc.want)
		}
	}
	if _, found := blocker(sorted, "foreign"); found {
		t.Error("a foreign child was treated as a contender")
	}
}

// curatorReadHolds restates Curator's readLockPredicate on its own sort.
func curatorReadHolds(children []string, me string) bool {
	key := func(s string) string { return curatorKey(curatorKey(s, "__READ__"), "__WRIT__") }
	firstWrite, mine := math.MaxInt, -1
	for i, c := range curatorSort(children, key) {
		if strings.Contains(c, "__WRIT__") {
			firstWrite = min(firstWrite, i)
		} else if strings.HasPrefix(c, me) {
			mine = i
			break
		}
	}
	return mine >= 0 && mine < firstWrite
}

// curatorWriteHolds restates Curator's standard predicate (maxLeases 1).
func curatorWriteHolds(children []string, me string, key func(string) string) bool {
	return curatorSort(children, key)[0] == me
}

// randomSeq favours the values around the wrap.
func randomSeq(r *rand.Rand) int32 {
	switch r.IntN(4) {
	case 0:
		return math.MaxInt32 - int32(r.IntN(5))
	case 1:
		return math.MinInt32 + int32(r.IntN(5))
	case 2:
		return int32(r.IntN(20)) - 10
	default:
		return int32(r.Uint32())
	}
}

// TestAgreesWithCurator checks, on random directories of contenders with
// distinct sequence numbers (as ZooKeeper assigns them) and no foreign
// children, that zkcoord grants a lock exactly when Curator would.
func TestAgreesWithCurator(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 500; round++ {
		n := 1 + r.IntN(8)
		seen := map[int32]bool{}
		var mutex, rw []string
		for len(mutex) < n {
			s := randomSeq(r)
			if seen[s] {
				continue
			}
			seen[s] = true
			id := fmt.Sprintf("_c_%08x-0000-0000-0000-%012x-", r.Uint32(), r.Uint64()&0xffffffffffff)
			mutex = append(mutex, id+"lock-"+seq.Format(s))
			kind := "__READ__"
			if r.IntN(3) == 0 {
				kind = "__WRIT__"
			}
			rw = append(rw, id+kind+seq.Format(s))
		}
		sortedM := sortContenders(mutex, mutexContender)
		sortedRW := sortContenders(rw, rwContender)
		for i := range mutex {
			pred, _ := blocker(sortedM, mutex[i])
			if got, want := pred == "", curatorWriteHolds(mutex, mutex[i], func(s string) string { return curatorKey(s, "lock-") }); got != want {
				t.Fatalf("mutex %v: %s holds = %v, Curator says %v", mutex, mutex[i], got, want)
			}
			pred, _ = blocker(sortedRW, rw[i])
			var want bool
			if strings.Contains(rw[i], "__WRIT__") {
				want = curatorWriteHolds(rw, rw[i], func(s string) string { return curatorKey(curatorKey(s, "__READ__"), "__WRIT__") })
			} else {
				want = curatorReadHolds(rw, rw[i])
			}
			if got := pred == ""; got != want {
				t.Fatalf("rw %v: %s holds = %v, Curator says %v", rw, rw[i], got, want)
			}
		}
	}
}

// FuzzRecognise: arbitrary names never crash the parsers, and a recognised
// name's key is the one Curator would compare.
func FuzzRecognise(f *testing.F) {
	for _, s := range []string{protected + "lock-0000000001", "x__WRIT__-2147483648", "lease-", "__lock__0000000001", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if c, ok := mutexContender(name); ok {
			if _, ok := seq.Parse(c.Key); !ok || (strings.Contains(name, "lock-") && c.Key != curatorKey(name, "lock-") && c.Key != curatorKey(name, "__lock__")) {
				t.Fatalf("mutex key %q of %q", c.Key, name)
			}
		}
		if c, ok := rwContender(name); ok {
			key, writer := curatorKey(curatorKey(name, "__READ__"), "__WRIT__"), strings.Contains(name, "__WRIT__")
			if !strings.Contains(name, "__READ__") && !writer { // Kazoo's read/write lock nodes
				if strings.Contains(name, "__rlock__") {
					key, writer = curatorKey(name, "__rlock__"), false
				} else {
					key, writer = curatorKey(name, "__lock__"), true
				}
			}
			if c.Key != key || c.writer != writer {
				t.Fatalf("rw contender %+v of %q", c, name)
			}
		}
		if c, ok := leaseContender(name); ok && c.Key != curatorKey(name, "lease-") {
			t.Fatalf("lease key %q of %q", c.Key, name)
		}
		sorted := sortContenders([]string{name, protected + "lock-0000000001"}, mutexContender)
		blocker(sorted, name)
	})
}

func TestOtherKind(t *testing.T) {
	const kazoo = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		mine     string
		children []string
		node     string // "" = no other kind
		kind     string
	}{
		{mutexKind, []string{protected + "lock-0000000001", kazoo + "__lock__0000000002", "readme", "locks", "lease-0000000003"}, "", ""},
		{mutexKind, []string{protected + "lock-0000000001", protected + "__READ__0000000002"}, protected + "__READ__0000000002", rwKind},
		{mutexKind, []string{protected + "__WRIT__0000000002"}, protected + "__WRIT__0000000002", rwKind},
		{mutexKind, []string{kazoo + "__rlock__0000000002"}, kazoo + "__rlock__0000000002", rwKind},
		{rwKind, []string{protected + "__READ__0000000001", protected + "__WRIT__0000000002", kazoo + "__lock__0000000003", kazoo + "__rlock__0000000004"}, "", ""},
		{rwKind, []string{protected + "__READ__0000000001", protected + "lock-0000000002"}, protected + "lock-0000000002", mutexKind},
		{rwKind, []string{"lock-abc", "__READ__", protected + "lease-0000000001"}, "", ""},
		{semaphoreKind, []string{"locks", "leases"}, "", ""},
		{semaphoreKind, []string{"locks", "leases", kazoo + "__lock__0000000003"}, kazoo + "__lock__0000000003", mutexKind},
		{semaphoreKind, []string{"leases", protected + "__READ__0000000001"}, protected + "__READ__0000000001", rwKind},
	} {
		node, kind := otherKind(tc.children, tc.mine)
		if node != tc.node || kind != tc.kind {
			t.Errorf("otherKind(%v, %s) = %q, %q; want %q, %q", tc.children, tc.mine, node, kind, tc.node, tc.kind)
		}
	}
}
