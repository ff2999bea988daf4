package alloc

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
)

func crc(data []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
}

func deflate(t testing.TB, body []byte) []byte {
	var buf bytes.Buffer
	zw, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(body)
	zw.Close()
	return buf.Bytes()
}

// FuzzDecode: Decode never panics, fails only with ErrCorrupt, and whatever
// it accepts encodes back to a record that decodes the same.
func FuzzDecode(f *testing.F) {
	for _, rec := range []Record{
		{},
		{Term: 1, Generation: 2, Assignment: Assignment{"a": {"r1"}, "b": {}}},
		{Term: 7, Generation: 9, Assignment: Balanced(ids("c_", 4, 10), ids("resource-", 30, 6))},
	} {
		b, err := Encode(rec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"a":["r1"]}`))
	f.Add([]byte{0xA7, 'z', 'a', 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		for c, l := range rec.Assignment {
			if !slices.IsSorted(l) {
				t.Fatalf("client %q: unsorted %v", c, l)
			}
		}
		b, err := Encode(rec)
		if err != nil {
			t.Fatalf("Encode of a decoded record: %v", err)
		}
		again, err := Decode(b)
		if err != nil || again.Term != rec.Term || again.Generation != rec.Generation || !again.Assignment.Equal(rec.Assignment) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, rec)
		}
	})
}

// fuzzInput turns fuzz bytes into a previous assignment and a new membership
// over a small universe (32 clients, 64 resources), so that the fuzzer reaches
// joins, leaves, additions, removals and malformed previous assignments.
func fuzzInput(data []byte) (prev Assignment, clients, resources []string) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	word := func(n int) uint64 {
		var w uint64
		for i := 0; i < n; i++ {
			w = w<<8 | uint64(next())
		}
		return w
	}
	client := func(i int) string { return fmt.Sprintf("c_%010d", i) }
	resource := func(i int) string { return fmt.Sprintf("resource-%06d", i) }
	prevMask, curMask, resMask := word(4), word(4), word(8)
	for i := 0; i < 32; i++ {
		if curMask>>i&1 == 1 {
			clients = append(clients, client(i))
		}
	}
	for i := 0; i < 64; i++ {
		if resMask>>i&1 == 1 {
			resources = append(resources, resource(i))
		}
	}
	prev = Assignment{}
	for i := 0; i < 32; i++ {
		if prevMask>>i&1 == 1 {
			prev[client(i)] = []string{}
		}
	}
	for i := 0; i < 64 && len(data) > 0; i++ {
		b := next()
		owner := int(b % 48) // 32..47: nobody
		if owner < 32 && prevMask>>owner&1 == 1 {
			prev[client(owner)] = append(prev[client(owner)], resource(i))
		}
		if b >= 240 { // malformed: also listed by another client
			other := client(int(b) % 32)
			prev[other] = append(prev[other], resource(i))
		}
	}
	return prev, clients, resources
}

// FuzzSticky checks Sticky's properties (balanced, complete, deterministic,
// stable, fewest moves) on fuzzed inputs, and the join bound when the input is
// a balanced group gaining one client.
func FuzzSticky(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x0f, 0, 0, 0, 0x1f, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4, 250, 251, 252})
	f.Add([]byte{0, 0, 0, 7, 0, 0, 0, 0x0e, 0, 0, 0, 0, 0, 0, 3, 0xff, 1, 1, 1, 1, 2, 2, 2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		prev, clients, resources := fuzzInput(data)
		checkSticky(t, prev, clients, resources)
		// One client joining a balanced group moves at most its share.
		if len(clients) > 0 {
			base := clients[1:]
			start := Balanced(base, resources)
			joined := Sticky(start, clients, resources)
			if moved, bound := len(Moved(start, joined)), (len(resources)+len(clients)-1)/len(clients); moved > bound {
				t.Fatalf("join of 1 to %d clients with %d resources moved %d > %d", len(base), len(resources), moved, bound)
			}
		}
	})
}

// FuzzBalanced checks Balanced: valid, deterministic, equal to Sticky from
// nothing, and contiguous runs in id order, larger shares first.
func FuzzBalanced(f *testing.F) {
	f.Add(uint8(0), uint16(0))
	f.Add(uint8(3), uint16(10))
	f.Add(uint8(7), uint16(1))
	f.Add(uint8(200), uint16(1000))
	f.Fuzz(func(t *testing.T, n uint8, m uint16) {
		m %= 2000
		clients := ids("c_", int(n), 10)
		resources := ids("resource-", int(m), 6)
		rev := slices.Clone(clients)
		slices.Reverse(rev)
		got := Balanced(rev, resources)
		if err := got.Check(clients, resources); err != nil {
			t.Fatal(err)
		}
		if !equalExact(got, Sticky(nil, clients, resources)) {
			t.Fatal("Balanced differs from Sticky(nil, ...)")
		}
		var flat []string
		for i, c := range clients {
			l := got[c]
			if i > 0 && len(l) > len(got[clients[i-1]]) {
				t.Fatalf("client %d owns more than client %d", i, i-1)
			}
			flat = append(flat, l...)
		}
		if len(clients) == 0 {
			if len(got) != 0 {
				t.Fatalf("no clients: %v", got)
			}
			return
		}
		if !slices.Equal(flat, resources) {
			t.Fatal("not contiguous runs in id order")
		}
	})
}
