package election

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/seq"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
)

// TestParticipants: participants are ordered as LeaderLatch orders them,
// by the text after the last "latch-" compared as Java strings; after the
// counter wrapped, that is neither numeric nor creation order.
func TestParticipants(t *testing.T) {
	children := []string{
		"_c_b-latch-0000000002", "zzz", "_c_a-latch-0000000001", "lock-0000000000",
		"_c_w-latch--2147483648", "_c_c-latch-0000000003", "_c_u-latch-2147483647",
		"_c_v-latch--000000001", "_c_t-latch--999999999",
	}
	sorted, ignored := participants(children)
	want := []string{
		"_c_v-latch--000000001", "_c_w-latch--2147483648", "_c_t-latch--999999999",
		"_c_a-latch-0000000001", "_c_b-latch-0000000002", "_c_c-latch-0000000003",
		"_c_u-latch-2147483647",
	}
	if !slices.Equal(sorted, want) {
		t.Fatalf("sorted %v, want %v", sorted, want)
	}
	if !slices.Equal(ignored, []string{"zzz", "lock-0000000000"}) {
		t.Fatalf("ignored %v", ignored)
	}
	if position(sorted, "_c_b-latch-0000000002") != 4 || position(sorted, "nope") != -1 {
		t.Fatalf("position")
	}
	if k := keyOf("a-latch-b-latch-0000000003").Key; k != "0000000003" {
		t.Fatalf("key %q: the last latch- counts", k)
	}
}

// randomName makes a node name from pieces that stress Curator's
// ordering: sequence numbers before and after wrapping, several "latch-",
// dashes, digits and characters outside ASCII and the BMP.
func randomName(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return fmt.Sprintf("_c_%08x-0000-4000-8000-000000000000-latch-%s", r.Uint32(), seq.Format(int32(r.Uint32())))
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
			for names[i] == "" || seen[keyOf(names[i]).Key] {
				names[i] = randomName(r)
			}
			seen[keyOf(names[i]).Key] = true
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
		// Curator sorts names without "latch-" too, by the whole name.
		slices.SortFunc(ours, func(a, b string) int { return seq.CompareCurator(keyOf(a), keyOf(b)) })
		if !slices.Equal(ours, java) {
			t.Fatalf("batch %d: order differs\nzkcoord: %q\nCurator: %q", batch, ours, java)
		}
	}
}
