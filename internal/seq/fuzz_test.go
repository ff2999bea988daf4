package seq

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The fuzz tests check every rule against a reference model written
// independently of the code under test. Their seeds, which run under a
// plain go test, sit around the wrap from 2147483647 to -2147483648.

// rfc1982 compares two sequence numbers pairwise as RFC 1982 does for
// 32-bit serial numbers; ok is false for the pairs it leaves undefined
// (exactly 2^31 apart).
func rfc1982(a, b int32) (c int, ok bool) {
	d := uint32(b) - uint32(a)
	switch {
	case d == 0:
		return 0, true
	case d < 1<<31:
		return -1, true
	case d > 1<<31:
		return 1, true
	}
	return 0, false
}

// kazooCompare compares two sequence suffixes as Python compares str
// values, by code point, which is how Kazoo's Lock sorts the suffixes it
// matched.
func kazooCompare(a, b string) int { return slices.Compare([]rune(a), []rune(b)) }

// kazooMatches reports whether Kazoo's Lock would take s as a sequence
// suffix: its pattern is an optional "-" and ten digits.
func kazooMatches(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if len(s) != 10 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"0000000001", "2147483647", "-2147483648", "-2147483647", "-000000001",
		"-999999999", "-1000000000", "2147483648", "-2147483649", "-0000000001",
		"+000000001", "abc", "", "٠٠٠٠٠٠٠٠٠١",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := strconv.ParseInt(s, 10, 32)
		want := err == nil && fmt.Sprintf("%010d", n) == s
		got, ok := Parse(s)
		if ok != want || ok && int64(got) != n {
			t.Fatalf("Parse(%q) = %d, %v; want %d, %v", s, got, ok, n, want)
		}
		if ok && Format(got) != s {
			t.Fatalf("Format(Parse(%q)) = %q", s, Format(got))
		}
	})
}

func FuzzCompareText(f *testing.F) {
	f.Add("0000000001", "0000000002")
	f.Add("2147483647", "-2147483648")
	f.Add("-2147483648", "0000000000")
	f.Add("-000000001", "-999999999")
	f.Add("a\U0001F600", "a\uff61")
	f.Add("\u00e9x", "\u00e9y")
	f.Add("latch-1", "x-latch-0")
	f.Fuzz(func(t *testing.T, a, b string) {
		// ZooKeeper names are UTF-8; Java decodes them before comparing.
		a, b = strings.ToValidUTF8(a, "\ufffd"), strings.ToValidUTF8(b, "\ufffd")
		got := CompareText(a, b)
		if want := javaCompare(a, b); got != want {
			t.Fatalf("CompareText(%q, %q) = %d, Java says %d", a, b, got, want)
		}
		if back := CompareText(b, a); back != -got {
			t.Fatalf("not antisymmetric: %d and %d", got, back)
		}
		na, nb := Keyed{"_c_x-latch-" + a, a}, Keyed{"_c_y-latch-" + b, b}
		if c := CompareCurator(na, nb); c == 0 || got != 0 && c != got {
			t.Fatalf("CompareCurator(%v, %v) = %d, keys compare %d", na, nb, c, got)
		}
	})
}

// FuzzOrders creates n nodes whose numbers advance by step from start,
// modulo 2^32 as ZooKeeper's counter does, and checks every rule on them.
func FuzzOrders(f *testing.F) {
	f.Add(uint32(0), uint16(5), uint32(1))
	f.Add(uint32(math.MaxInt32-2), uint16(6), uint32(1)) // across the wrap
	f.Add(uint32(math.MaxInt32), uint16(2), uint32(1))   // 2147483647, -2147483648
	f.Add(uint32(math.MaxUint32-1), uint16(4), uint32(1))
	f.Add(uint32(math.MaxInt32-1000), uint16(50), uint32(97))
	f.Add(uint32(1<<31+999999990), uint16(30), uint32(1)) // -1000000000 and -999999999
	f.Add(uint32(0), uint16(3), uint32(1<<30))            // spanning 2^31
	f.Add(uint32(5), uint16(3), uint32(1<<31-1))          // past half the circle
	f.Fuzz(func(t *testing.T, start uint32, n uint16, step uint32) {
		n = n%200 + 1
		step = max(step, 1)
		created := make([]int32, n)
		for i := range created {
			created[i] = int32(start + uint32(i)*step)
		}

		// Parsing: every number prints as ZooKeeper prints it, and reads
		// back.
		for _, s := range created {
			name := Format(s)
			if want := fmt.Sprintf("%010d", s); name != want {
				t.Fatalf("Format(%d) = %q, want %q", s, name, want)
			}
			if got, ok := Parse(After("_c_u-lock-"+name, "lock-")); !ok || got != s {
				t.Fatalf("Parse(%q) = %d, %v", name, got, ok)
			}
		}

		// The Curator order: names by their suffixes compared as Java
		// strings; Kazoo's order of the suffixes it matches is the same.
		keyed := make([]Keyed, n)
		for i, s := range created {
			name := fmt.Sprintf("_c_%08x-lock-%s", i, Format(s))
			keyed[i] = Keyed{Name: name, Key: After(name, "lock-")}
		}
		for _, a := range keyed {
			for _, b := range keyed {
				c := CompareCurator(a, b)
				if j := javaCompare(a.Key, b.Key); j != 0 && c != j || j == 0 && c != strings.Compare(a.Name, b.Name) {
					t.Fatalf("CompareCurator(%s, %s) = %d, Java says %d", a.Name, b.Name, c, j)
				}
				if kazooMatches(a.Key) && kazooMatches(b.Key) && kazooCompare(a.Key, b.Key) != CompareText(a.Key, b.Key) {
					t.Fatalf("Kazoo orders %s and %s otherwise", a.Key, b.Key)
				}
			}
		}

		// The serial order: creation order while the numbers span fewer
		// than 2^31 values, and then RFC 1982's pairwise order; numeric
		// order while none is negative; a total order always.
		shuffled := slices.Clone(created)
		slices.Reverse(shuffled)
		o := SerialOf(shuffled)
		got := slices.Clone(shuffled)
		slices.SortFunc(got, o.Compare)
		span := uint64(n-1) * uint64(step)
		if span < 1<<31 && !slices.Equal(got, created) {
			t.Fatalf("serial order %v, created %v", got, created)
		}
		if span < 1<<31 {
			for _, a := range created {
				for _, b := range created {
					if want, ok := rfc1982(a, b); ok && o.Compare(a, b) != want {
						t.Fatalf("Compare(%d, %d) = %d, RFC 1982 says %d", a, b, o.Compare(a, b), want)
					}
				}
			}
		}
		if !slices.ContainsFunc(created, func(s int32) bool { return s < 0 }) {
			if !slices.IsSorted(got) {
				t.Fatalf("serial order %v of non-negative numbers is not numeric", got)
			}
		}
		again := slices.Clone(created)
		slices.SortFunc(again, SerialOf(again).Compare)
		if !slices.Equal(again, got) {
			t.Fatalf("the order depends on the input order: %v and %v", again, got)
		}
		for _, a := range created {
			for _, b := range created {
				if o.Compare(a, b) != -o.Compare(b, a) || (o.Compare(a, b) == 0) != (a == b) {
					t.Fatalf("Compare(%d, %d) = %d, Compare(%d, %d) = %d", a, b, o.Compare(a, b), b, a, o.Compare(b, a))
				}
			}
		}
	})
}
