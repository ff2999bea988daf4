package alloc

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// loadOf is the test's own sum of the weights of a client's resources, and
// the heaviest of them.
func loadOf(list []string, rw Weights) (load, heaviest int64) {
	for _, r := range list {
		w := rw.Of(r)
		load += w
		heaviest = max(heaviest, w)
	}
	return load, heaviest
}

// minWeightedMoves computes, independently of WeightedSticky, the fewest
// moves of resources of weight 1 when client c must own floor(M*w/W) or,
// for exactly M - sum(floor) clients whose share is not whole, one more.
func minWeightedMoves(prev Assignment, clients []string, cw Weights, resources []string) int {
	if len(clients) == 0 {
		return 0
	}
	rs := map[string]bool{}
	for _, r := range resources {
		rs[r] = true
	}
	k := map[string]int{}
	for r, o := range prevOwners(prev) {
		if rs[r] {
			k[o]++
		}
	}
	var total int64
	for _, c := range clients {
		total += cw.Of(c)
	}
	m := int64(len(resources))
	kept, extra, gain := 0, m, 0
	for _, c := range clients {
		floor := int(m * cw.Of(c) / total)
		extra -= int64(floor)
		kept += min(k[c], floor)
		if m*cw.Of(c)%total != 0 && k[c] > floor {
			gain++
		}
	}
	return len(resources) - kept - min(int(extra), gain)
}

// checkWeighted asserts the properties of WeightedSticky for one input
// (clients and resources without duplicates).
func checkWeighted(t *testing.T, prev Assignment, clients []string, cw Weights, resources []string, rw Weights) Assignment {
	t.Helper()
	got := WeightedSticky(prev, clients, cw, resources, rw)
	if len(clients) == 0 {
		if len(got) != 0 {
			t.Fatalf("no clients: %v", got)
		}
		return got
	}
	norm, err := Validate(got, clients, resources)
	if err != nil {
		t.Fatalf("WeightedSticky(%v, %v, %v, %v, %v) = %v: %v", prev, clients, cw, resources, rw, got, err)
	}
	if !equalExact(got, norm) {
		t.Fatalf("not normalised (every client a key, lists sorted): %v", got)
	}
	// Balance within weights: load - heaviest <= share, where share =
	// total resource weight * client weight / total client weight.
	var totalW, totalR int64
	for _, c := range clients {
		totalW += cw.Of(c)
	}
	for _, r := range resources {
		totalR += rw.Of(r)
	}
	unit := rw.uniform(resources)
	for _, c := range clients {
		load, heaviest := loadOf(got[c], rw)
		if (load-heaviest)*totalW > totalR*cw.Of(c) {
			t.Fatalf("client %q (weight %d) has load %d, heaviest %d: above its share %d*%d/%d\n%v",
				c, cw.Of(c), load, heaviest, totalR, cw.Of(c), totalW, got)
		}
		if unit {
			// Share rounded down or up.
			if floor := totalR * cw.Of(c) / totalW; load < floor || load > floor+1 ||
				(load == floor+1 && totalR*cw.Of(c)%totalW == 0) {
				t.Fatalf("client %q (weight %d) owns %d, share %d*%d/%d", c, cw.Of(c), load, totalR, cw.Of(c), totalW)
			}
		}
	}
	if unit {
		if n, want := len(Moved(prev, got)), minWeightedMoves(prev, clients, cw, resources); n != want {
			t.Fatalf("moved %d, minimum %d\nprev=%v\ngot=%v", n, want, prev, got)
		}
	}
	// Deterministic, whatever the order of the inputs.
	r := rand.New(rand.NewPCG(uint64(len(clients)), uint64(len(resources))))
	again := WeightedSticky(prev.Clone(), shuffled(r, clients), cw, append(shuffled(r, resources), resources...), rw)
	if !equalExact(got, again) {
		t.Fatalf("not deterministic:\n%v\n%v", got, again)
	}
	// A fixed point: nothing moves when nothing changed.
	if fix := WeightedSticky(got, clients, cw, resources, rw); !equalExact(got, fix) {
		for _, c := range clients {
			l, h := loadOf(got[c], rw)
			l2, h2 := loadOf(fix[c], rw)
			t.Logf("%s w=%d: %d/%d -> %d/%d", c, cw.Of(c), l, h, l2, h2)
		}
		t.Fatalf("not stable:\n%v\n%v\nprev %v", got, fix, prev)
	}
	return got
}

func TestWeightedSticky(t *testing.T) {
	c := ids("c_", 3, 10)
	r := ids("r", 12, 2)
	tests := []struct {
		name      string
		prev      Assignment
		cw, rw    Weights
		resources []string
		want      Assignment
		wantLoads []int64
		wantMoves int
	}{
		{name: "capacities 1:2:3", cw: Weights{c[1]: 2, c[2]: 3}, resources: r,
			want:      Assignment{c[0]: r[0:2], c[1]: r[2:6], c[2]: r[6:12]},
			wantLoads: []int64{2, 4, 6}, wantMoves: 12},
		{name: "capacity raised keeps the rest", cw: Weights{c[1]: 2, c[2]: 3},
			prev: Assignment{c[0]: r[0:4], c[1]: r[4:8], c[2]: r[8:12]}, resources: r,
			want:      Assignment{c[0]: r[0:2], c[1]: r[4:8], c[2]: {r[2], r[3], r[8], r[9], r[10], r[11]}},
			wantLoads: []int64{2, 4, 6}, wantMoves: 2},
		{name: "rounded up where it keeps most", cw: Weights{c[0]: 1, c[1]: 1, c[2]: 1},
			prev: Assignment{c[2]: r[0:5]}, resources: r[0:5],
			want:      Assignment{c[0]: {r[2], r[3]}, c[1]: {r[4]}, c[2]: {r[0], r[1]}},
			wantLoads: []int64{2, 1, 2}, wantMoves: 3},
		{name: "heavy resources", rw: Weights{r[0]: 6, r[1]: 3}, resources: r[0:6],
			want:      Assignment{c[0]: {r[0]}, c[1]: {r[1], r[5]}, c[2]: {r[2], r[3], r[4]}},
			wantLoads: []int64{6, 4, 3}, wantMoves: 6},
		{name: "evened out", rw: Weights{r[0]: 6, r[1]: 3}, resources: r[0:6],
			prev:      Assignment{c[2]: r[0:6]},
			want:      Assignment{c[0]: {r[0]}, c[1]: {r[1]}, c[2]: {r[2], r[3], r[4], r[5]}},
			wantLoads: []int64{6, 3, 4}, wantMoves: 2},
		{name: "capacities and heavy resources", cw: Weights{c[2]: 4}, rw: Weights{r[0]: 4, r[1]: 4},
			resources: r[0:8],
			want:      Assignment{c[0]: {r[2], r[4]}, c[1]: {r[3], r[5]}, c[2]: {r[0], r[1], r[6], r[7]}},
			wantLoads: []int64{2, 2, 10}, wantMoves: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkWeighted(t, tt.prev, c, tt.cw, tt.resources, tt.rw)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i, cl := range c {
				if load, _ := loadOf(got[cl], tt.rw); load != tt.wantLoads[i] {
					t.Fatalf("%s: load %d, want %d", cl, load, tt.wantLoads[i])
				}
			}
			if n := len(Moved(tt.prev, got)); n != tt.wantMoves {
				t.Fatalf("moved %d, want %d", n, tt.wantMoves)
			}
		})
	}
}

// TestWeightedStickyUnweighted: with every weight 1 (or none given),
// WeightedSticky is Sticky and WeightedBalanced is Balanced.
func TestWeightedStickyUnweighted(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	clients := ids("c_", 17, 10)
	resources := ids("resource-", 200, 6)
	ones := Weights{clients[0]: 1, resources[0]: 1, resources[1]: 0, resources[2]: -3}
	var a Assignment
	for range 50 {
		cs := shuffled(r, clients)[:1+r.IntN(len(clients))]
		rs := shuffled(r, resources)[:r.IntN(len(resources))]
		want := Sticky(a, cs, rs)
		if got := WeightedSticky(a, cs, ones, rs, ones); !equalExact(got, want) {
			t.Fatalf("WeightedSticky with unit weights differs from Sticky:\n%v\n%v", got, want)
		}
		if got := WeightedBalanced(cs, nil, rs, nil); !equalExact(got, Balanced(cs, rs)) {
			t.Fatal("WeightedBalanced with unit weights differs from Balanced")
		}
		a = want
	}
}

// TestWeightedRandomWalk applies random joins, leaves, additions and
// removals with weights, checking every step.
func TestWeightedRandomWalk(t *testing.T) {
	for _, heavy := range []bool{false, true} {
		r := rand.New(rand.NewPCG(5, 6))
		pool := ids("c_", 40, 10)
		res := ids("resource-", 300, 6)
		cw, rw := Weights{}, Weights{}
		for _, c := range pool {
			cw[c] = 1 + r.Int64N(8)
		}
		if heavy {
			for _, x := range res {
				rw[x] = 1 + r.Int64N(20)
			}
		}
		var clients, resources []string
		var a Assignment
		for range 300 {
			switch r.IntN(4) {
			case 0:
				clients = append(clients, pool[r.IntN(len(pool))])
			case 1:
				if len(clients) > 0 {
					i := r.IntN(len(clients))
					clients = slices.Delete(clients, i, i+1)
				}
			case 2:
				for i := r.IntN(20); i >= 0; i-- {
					resources = append(resources, res[r.IntN(len(res))])
				}
			case 3:
				for i := r.IntN(20); i >= 0 && len(resources) > 0; i-- {
					j := r.IntN(len(resources))
					resources = slices.Delete(resources, j, j+1)
				}
			}
			clients, resources = uniqueSorted(clients), uniqueSorted(resources)
			a = checkWeighted(t, a, clients, cw, resources, rw)
		}
	}
}

func TestWeightsOf(t *testing.T) {
	w := Weights{"a": 5, "zero": 0, "neg": -2, "big": MaxWeight + 1}
	for id, want := range map[string]int64{"a": 5, "zero": 1, "neg": 1, "big": MaxWeight, "absent": 1} {
		if got := w.Of(id); got != want {
			t.Errorf("Of(%q) = %d, want %d", id, got, want)
		}
	}
	if got := Weights(nil).Of("x"); got != 1 {
		t.Errorf("nil Weights: %d", got)
	}
}

// TestWeightedExtremes: the largest weights do not overflow.
func TestWeightedExtremes(t *testing.T) {
	clients := ids("c_", 50, 10)
	resources := ids("resource-", 3000, 6)
	cw, rw := Weights{}, Weights{}
	for i, c := range clients {
		cw[c] = MaxWeight - int64(i)
	}
	for i, r := range resources {
		rw[r] = MaxWeight - int64(i%7)
	}
	a := checkWeighted(t, nil, clients, cw, resources, rw)
	checkWeighted(t, a, clients[1:], cw, resources[1:], rw)
	checkWeighted(t, nil, clients, cw, resources, nil)
}

// fuzzWeights turns fuzz bytes into weights for the universe of fuzzInput:
// byte i weighs client i (i < 32) or resource i-32; a byte b gives weight
// b%12-1, so that weights below 1 (counted as 1) occur too. Without bytes
// for resources, every resource weighs 1.
func fuzzWeights(data []byte) (cw, rw Weights) {
	cw, rw = Weights{}, Weights{}
	for i, b := range data {
		w := int64(b%12) - 1
		if b == 0xff {
			w = MaxWeight
		}
		switch {
		case i < 32:
			cw[fmt.Sprintf("c_%010d", i)] = w
		case i < 96:
			rw[fmt.Sprintf("resource-%06d", i-32)] = w
		}
	}
	return cw, rw
}

// FuzzWeightedSticky checks WeightedSticky's properties (valid, every
// client a key, load minus heaviest resource within the share, rounded
// shares and fewest moves for resources of weight 1, deterministic,
// stable) on fuzzed memberships and weights.
func FuzzWeightedSticky(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte{0, 0, 0, 7, 0, 0, 0, 0x0f, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, []byte{1, 2, 3, 4})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0x0f, 0x0f, 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3},
		[]byte{5, 1, 9, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 9, 1, 1, 7, 0xff})
	f.Fuzz(func(t *testing.T, data, weights []byte) {
		prev, clients, resources := fuzzInput(data)
		cw, rw := fuzzWeights(weights)
		got := checkWeighted(t, prev, clients, cw, resources, rw)
		// From its own result, one client joining or leaving.
		if len(clients) > 1 {
			checkWeighted(t, got, clients[1:], cw, resources, rw)
		}
		checkWeighted(t, got, append(slices.Clone(clients), "c_0000000099"), cw, resources, rw)
	})
}
