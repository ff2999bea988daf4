package queue

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

const uuidPrefix = "_c_0f8a3f4e-6d1c-4c5b-9a3e-2b7c1d9e8f70-"

func TestParseItem(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
		prio int
		seq  int32
	}{
		{"queue-0000000042", true, 0, 42},
		{uuidPrefix + "queue-0000000042", true, 0, 42},
		{uuidPrefix + "queue-007-0000000042", true, 7, 42},
		{"queue-999-2147483647", true, 999, math.MaxInt32},
		{"queue--2147483648", true, 0, math.MinInt32},
		{"queue-010--000000001", true, 10, -1},
		{"queue--000000001", true, 0, -1},
		{"claims", false, 0, 0},
		{"queue-", false, 0, 0},
		{"queue-42", false, 0, 0},
		{"queue-00000000042", false, 0, 0},
		{"queue-1000-0000000001", false, 0, 0},
		{"queue-+01-0000000001", false, 0, 0},
		{"queue-0a1-0000000001", false, 0, 0},
		{"queue-001-00000000x1", false, 0, 0},
		{"queue-001-2147483648", false, 0, 0},
		{"lock-0000000001", false, 0, 0},
		{"_c_not-a-uuid-queue-0000000001", false, 0, 0},
		{"queue--0000000001", false, 0, 0},
	} {
		it, ok := parseItem(tc.name)
		if ok != tc.ok || ok && (it.priority != tc.prio || it.seq != tc.seq || it.name != tc.name) {
			t.Errorf("parseItem(%q) = %+v, %v; want priority %d seq %d, %v", tc.name, it, ok, tc.prio, tc.seq, tc.ok)
		}
	}
}

func names(items []item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.name)
	}
	return out
}

func TestOrderAcrossSequenceWrap(t *testing.T) {
	// Created in this order: the counter passes 2^31 and goes negative.
	created := []string{
		"queue-2147483645", "queue-2147483646", "queue-2147483647",
		"queue--2147483648", "queue--2147483647", "queue--2147483646",
	}
	shuffled := []string{created[4], created[0], created[5], created[2], created[3], created[1], "claims", "junk"}
	got := names(parseItems(shuffled))
	if !slices.Equal(got, created) {
		t.Fatalf("order = %v; want %v", got, created)
	}

	// Near the end of the negative range, wrapping back to zero.
	created = []string{"queue--000000002", "queue--000000001", "queue-0000000000", "queue-0000000001"}
	got = names(parseItems([]string{created[3], created[1], created[2], created[0]}))
	if !slices.Equal(got, created) {
		t.Fatalf("order = %v; want %v", got, created)
	}
}

func TestOrderByPriorityThenSequence(t *testing.T) {
	children := []string{
		uuidPrefix + "queue-005-0000000001",
		uuidPrefix + "queue-001-0000000004",
		uuidPrefix + "queue-0000000002", // FIFO item: priority 0
		uuidPrefix + "queue-001-0000000003",
		uuidPrefix + "queue-005--2147483648", // after the wrap: newest
		uuidPrefix + "queue-005-2147483647",
	}
	want := []string{children[2], children[3], children[1], children[0], children[5], children[4]}
	if got := names(parseItems(children)); !slices.Equal(got, want) {
		t.Fatalf("order = %v\nwant %v", got, want)
	}
}

// Any window of fewer than 2^31 consecutive sequence numbers, wherever it
// sits on the circle, comes out in creation order.
func FuzzSerialOrder(f *testing.F) {
	f.Add(uint32(0), uint16(5), uint16(3))
	f.Add(uint32(math.MaxInt32-2), uint16(10), uint16(1))
	f.Add(uint32(math.MaxUint32-1), uint16(4), uint16(7))
	f.Fuzz(func(t *testing.T, start uint32, n uint16, step uint16) {
		n = n%200 + 1
		step = step%1000 + 1
		var created []string
		for i := range uint32(n) {
			seq := int32(start + i*uint32(step))
			created = append(created, fmt.Sprintf("queue-%010d", seq))
		}
		shuffled := slices.Clone(created)
		slices.Reverse(shuffled)
		if got := names(parseItems(shuffled)); !slices.Equal(got, created) {
			t.Fatalf("order = %v; want %v", got, created)
		}
	})
}
