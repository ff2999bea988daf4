package election

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/zkcoord/zkcoord/internal/interop"
)

// seq formats a sequence number the way ZooKeeper does (%010d of an int32).
func seq(n int32) string { return fmt.Sprintf("%010d", n) }

func TestSortKey(t *testing.T) {
	for _, tc := range []struct{ name, key string }{
		{"_c_2f0ca1d0-96a3-4f0e-8a51-6a0d3b3f7c11-latch-0000000007", "0000000007"},
		{"_c_2f0ca1d0-96a3-4f0e-8a51-6a0d3b3f7c11-latch--2147483648", "-2147483648"},
		{"latch-0000000001", "0000000001"},
		{"a-latch-b-latch-0000000003", "0000000003"},
		{"ends-with-latch-", ""},
		{"no-marker", "no-marker"},
		{"", ""},
	} {
		if got := sortKey(tc.name); got != tc.key {
			t.Errorf("sortKey(%q) = %q, want %q", tc.name, got, tc.key)
		}
	}
}

func TestCompareKeys(t *testing.T) {
	// Each row is in Curator's order.
	for _, row := range [][]string{
		{seq(0), seq(1), seq(2), seq(10), seq(math.MaxInt32)},
		// After the counter wraps, names sort as text: the negative ones
		// first, and among them not in numeric order.
		{seq(-1), seq(-2), seq(math.MinInt32 + 1), seq(math.MinInt32), seq(0)},
		{"", "-", "0", "00", "1", "A", "a", "z"},
		// Java compares UTF-16 code units: a surrogate pair (U+1F600) sorts
		// before U+FF61, although UTF-8 bytes would order them the other way.
		{"a", "a\u00e9", "a\U0001F600", "a\uff61", "b"},
		{"\U0001F600", "\ue000", "\uff61"},
	} {
		for i := range row {
			for j := range row {
				want := cmpInt(i, j)
				if got := compareKeys(row[i], row[j]); got != want {
					t.Errorf("compareKeys(%q, %q) = %d, want %d", row[i], row[j], got, want)
				}
			}
		}
	}
	if compareKeys("\U0001F600", "\uff61") >= 0 {
		t.Errorf("surrogate pair must sort before U+FF61")
	}
}

func TestParticipants(t *testing.T) {
	children := []string{
		"_c_b-latch-0000000002", "zzz", "_c_a-latch-0000000001", "lock-0000000000",
		"_c_w-latch--2147483648", "_c_c-latch-0000000003",
	}
	sorted, ignored := participants(children)
	want := []string{"_c_w-latch--2147483648", "_c_a-latch-0000000001", "_c_b-latch-0000000002", "_c_c-latch-0000000003"}
	if !slices.Equal(sorted, want) {
		t.Fatalf("sorted %v, want %v", sorted, want)
	}
	if !slices.Equal(ignored, []string{"zzz", "lock-0000000000"}) {
		t.Fatalf("ignored %v", ignored)
	}
	if position(sorted, "_c_b-latch-0000000002") != 2 || position(sorted, "nope") != -1 {
		t.Fatalf("position")
	}
}

// javaCompare is the reference: java.lang.String.compareTo.
func javaCompare(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return cmpInt(int(ua[i]), int(ub[i]))
		}
	}
	return cmpInt(len(ua), len(ub))
}

func FuzzCompareKeys(f *testing.F) {
	f.Add("0000000001", "0000000002")
	f.Add("-2147483648", "0000000000")
	f.Add("a\U0001F600", "a\uff61")
	f.Add("\u00e9x", "\u00e9y")
	f.Add("latch-1", "x-latch-0")
	f.Fuzz(func(t *testing.T, a, b string) {
		// ZooKeeper names are UTF-8; Java decodes them before comparing.
		a, b = strings.ToValidUTF8(a, "\ufffd"), strings.ToValidUTF8(b, "\ufffd")
		got := compareKeys(a, b)
		if want := javaCompare(a, b); got != want {
			t.Fatalf("compareKeys(%q, %q) = %d, Java says %d", a, b, got, want)
		}
		if back := compareKeys(b, a); back != -got {
			t.Fatalf("not antisymmetric: %d and %d", got, back)
		}
		na, nb := "_c_x-latch-"+a, "_c_y-latch-"+b
		keys := javaCompare(sortKey(na), sortKey(nb))
		if c := compareNodes(na, nb); c == 0 || keys != 0 && c != keys {
			t.Fatalf("compareNodes(%q, %q) = %d, keys compare %d", na, nb, c, keys)
		}
	})
}

// randomName makes a node name from pieces that stress Curator's
// ordering: sequence numbers before and after wrapping, several "latch-",
// dashes, digits and characters outside ASCII and the BMP.
func randomName(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return fmt.Sprintf("_c_%08x-0000-4000-8000-000000000000-latch-%s", r.Uint32(), seq(int32(r.Uint32())))
	}
	pieces := []string{"latch-", "-", "0", "1", "9", "2147483648", "a", "Z", "_c_", "\u00e9", "\uff61", "\U0001F600", "\ue000", " "}
	var b strings.Builder
	for n := 1 + r.IntN(6); n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestOrderMatchesCurator sorts random names with Curator's own code (the
// sorter LeaderLatch uses) and with this package, and compares.
func TestOrderMatchesCurator(t *testing.T) {
	prog := interop.CompileJava(t, "testdata/SortCheck.java")
	proc := prog.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := proc.Expect(ctx, "READY"); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for batch := 0; batch < 50; batch++ {
		names := make([]string, 2+r.IntN(30))
		seen := map[string]bool{}
		for i := range names {
			for names[i] == "" || seen[sortKey(names[i])] {
				names[i] = randomName(r)
			}
			seen[sortKey(names[i])] = true
			if err := proc.Send(names[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := proc.Send(""); err != nil {
			t.Fatal(err)
		}
		var java []string
		for {
			line, err := proc.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if line == "" {
				break
			}
			java = append(java, line)
		}
		ours := slices.Clone(names)
		sort.Slice(ours, func(i, j int) bool { return compareNodes(ours[i], ours[j]) < 0 })
		if !slices.Equal(ours, java) {
			t.Fatalf("batch %d: order differs\nzkcoord: %q\nCurator: %q", batch, ours, java)
		}
	}
}
