package alloc

import "testing"

// The 10,000 x 1,000 allocation must take well under 50 ms.

func BenchmarkBalanced10kx1k(b *testing.B) {
	clients := ids("c_", 1000, 10)
	resources := ids("resource-", 10000, 6)
	b.ReportAllocs()
	for b.Loop() {
		Balanced(clients, resources)
	}
}

func BenchmarkStickyJoin10kx1k(b *testing.B) {
	clients := ids("c_", 1001, 10)
	resources := ids("resource-", 10000, 6)
	prev := Balanced(clients[:1000], resources)
	b.ReportAllocs()
	for b.Loop() {
		Sticky(prev, clients, resources)
	}
}

func BenchmarkEncode10kx1k(b *testing.B) {
	rec := bigRecord()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode10kx1k(b *testing.B) {
	data, err := Encode(bigRecord())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// The weighted cases: clients of capacities 1 to 4, and resources of
// weights 1 to 8 as well.

func weightedInput() (clients, resources []string, cw, rw Weights) {
	clients = ids("c_", 1001, 10)
	resources = ids("resource-", 10000, 6)
	cw, rw = Weights{}, Weights{}
	for i, c := range clients {
		cw[c] = int64(1 + i%4)
	}
	for i, r := range resources {
		rw[r] = int64(1 + i*7%8)
	}
	return clients, resources, cw, rw
}

func BenchmarkWeightedStickyJoin10kx1k(b *testing.B) {
	clients, resources, cw, _ := weightedInput()
	prev := WeightedBalanced(clients[:1000], cw, resources, nil)
	b.ReportAllocs()
	for b.Loop() {
		WeightedSticky(prev, clients, cw, resources, nil)
	}
}

func BenchmarkWeightedBalancedHeavy10kx1k(b *testing.B) {
	clients, resources, cw, rw := weightedInput()
	b.ReportAllocs()
	for b.Loop() {
		WeightedBalanced(clients[:1000], cw, resources, rw)
	}
}

func BenchmarkWeightedStickyHeavyJoin10kx1k(b *testing.B) {
	clients, resources, cw, rw := weightedInput()
	prev := WeightedBalanced(clients[:1000], cw, resources, rw)
	b.ReportAllocs()
	for b.Loop() {
		WeightedSticky(prev, clients, cw, resources, rw)
	}
}
