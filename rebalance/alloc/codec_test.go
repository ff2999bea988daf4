package alloc

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// bigRecord is the size target: 1,000 clients and 10,000 resources with
// realistic ids, after some churn so that owners are scattered.
var bigRecord = sync.OnceValue(func() Record {
	clients := ids("c_", 1000, 10)
	resources := ids("resource-", 10000, 6)
	a := Balanced(clients, resources)
	r := rand.New(rand.NewPCG(7, 7))
	// Replace clients one by one, as rolling restarts do.
	next := 1000
	for i := 0; i < 60; i++ {
		j := r.IntN(len(clients))
		clients[j] = ids("c_", next+1, 10)[next]
		next++
		a = Sticky(a, clients, resources)
	}
	return Record{Term: 41, Generation: 1234, Assignment: a}
})

func TestEncodeRoundTrip(t *testing.T) {
	tests := []Record{
		{},
		{Term: -1, Generation: 1 << 62, Assignment: Assignment{}},
		{Term: 3, Generation: 4, Assignment: Assignment{"a": {}, "b": {}}},
		{Term: 3, Generation: 4, Assignment: Assignment{"a": {"r2", "r1"}, "b": {}, "c": {"r3"}}},
		{Term: 1, Generation: 1, Assignment: Assignment{"": {""}, "x\x00y": {"\xff", "é"}}},
		{Term: 9, Generation: 2, Assignment: Balanced(ids("c_", 7, 10), ids("resource-", 100, 6))},
		bigRecord(),
	}
	for i, rec := range tests {
		b, err := Encode(rec)
		if err != nil {
			t.Fatalf("%d: Encode: %v", i, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%d: Decode: %v", i, err)
		}
		if got.Term != rec.Term || got.Generation != rec.Generation || !got.Assignment.Equal(rec.Assignment) {
			t.Fatalf("%d: round trip: got %+v, want %+v", i, got, rec)
		}
		for c, l := range got.Assignment {
			if l == nil {
				t.Fatalf("%d: client %q has a nil list", i, c)
			}
			if _, ok := rec.Assignment[c]; !ok {
				t.Fatalf("%d: client %q appeared", i, c)
			}
		}
		if len(got.Assignment) != len(rec.Assignment) {
			t.Fatalf("%d: %d clients, want %d", i, len(got.Assignment), len(rec.Assignment))
		}
		again, err := Encode(got)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%d: Encode not deterministic (err %v)", i, err)
		}
	}
}

func TestEncodeSize(t *testing.T) {
	rec := bigRecord()
	b, err := Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	bal, err := Encode(Record{Assignment: Balanced(ids("c_", 1000, 10), ids("resource-", 10000, 6))})
	if err != nil {
		t.Fatal(err)
	}
	// Worst case: every resource owned by a client drawn at random.
	clients := ids("c_", 1000, 10)
	resources := ids("resource-", 10000, 6)
	scattered := Assignment{}
	r := rand.New(rand.NewPCG(3, 3))
	for i, res := range shuffled(r, resources) {
		c := clients[i%len(clients)]
		scattered[c] = append(scattered[c], res)
	}
	for _, l := range scattered {
		slices.Sort(l)
	}
	worst, err := Encode(Record{Term: 1, Generation: 1, Assignment: scattered})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("1,000 clients x 10,000 resources: %d bytes balanced, %d after churn, %d scattered at random",
		len(bal), len(b), len(worst))
	for _, n := range []int{len(b), len(bal), len(worst)} {
		if n > 100<<10 {
			t.Fatalf("encoded size %d bytes, want < 100 KB", n)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	_, err := Encode(Record{Assignment: Assignment{"a": {"r1"}, "b": {"r1"}}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("duplicate resource: %v", err)
	}
	_, err = Encode(Record{Assignment: Assignment{"a": {"r1", "r1"}}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("duplicate in a list: %v", err)
	}
	// Incompressible ids: 2,000 resources of 600 random bytes.
	r := rand.New(rand.NewPCG(1, 1))
	var res []string
	for i := 0; i < 2000; i++ {
		b := make([]byte, 600)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		res = append(res, string(b))
	}
	_, err = Encode(Record{Assignment: Balanced([]string{"a", "b"}, res)})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("huge record: %v", err)
	}
}

func TestDecodeEmpty(t *testing.T) {
	for _, b := range [][]byte{nil, {}} {
		rec, err := Decode(b)
		if err != nil || !reflect.DeepEqual(rec, Record{}) {
			t.Fatalf("Decode(%v) = %+v, %v; want zero Record", b, rec, err)
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good, err := Encode(Record{Term: 5, Generation: 6, Assignment: Balanced(ids("c_", 5, 10), ids("resource-", 40, 6))})
	if err != nil {
		t.Fatal(err)
	}
	wrongVersion := bytes.Clone(good)
	wrongVersion[3] = 2
	badCRC := bytes.Clone(good)
	badCRC[5] ^= 1
	foreign := map[string][]byte{
		"json":            []byte(`{"c_0000000001":["r1","r2"]}`),
		"text":            []byte("StopActivity"),
		"one byte":        {0xA7},
		"header only":     good[:headerLen],
		"wrong version":   wrongVersion,
		"bad checksum":    badCRC,
		"trailing":        append(bytes.Clone(good), 0),
		"random":          randomBytes(1000, 3),
		"magic + random":  append(bytes.Clone(good[:headerLen]), randomBytes(100, 4)...),
		"zero bytes":      make([]byte, 64),
		"four-byte count": {0, 0, 0, 7},
	}
	for name, b := range foreign {
		if _, err := Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Decode error %v, want ErrCorrupt", name, err)
		}
	}
	// Every truncation and every single-bit flip is detected.
	for n := 1; n < len(good); n++ {
		if _, err := Decode(good[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	for i := range good {
		for bit := 0; bit < 8; bit++ {
			b := bytes.Clone(good)
			b[i] ^= 1 << bit
			if _, err := Decode(b); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("bit %d of byte %d flipped: %v", bit, i, err)
			}
		}
	}
}

// TestDecodeHostileBody: a body with a valid checksum but inconsistent
// contents is rejected, not trusted.
func TestDecodeHostileBody(t *testing.T) {
	bodies := map[string][]byte{
		"huge client count":     {0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"resources, no clients": {0, 0, 0, 1, 0, 2, 'r', '1', 0},
		"owner out of range":    {0, 0, 1, 0, 1, 'a', 1, 0, 2, 'r', '1', 2},
		"unsorted clients":      {0, 0, 2, 0, 1, 'b', 0, 1, 'a', 0},
		"duplicate clients":     {0, 0, 2, 0, 1, 'a', 1, 0, 0},
		"prefix too long":       {0, 0, 1, 5, 1, 'a', 0},
		"unread bytes":          {0, 0, 0, 0, 9},
	}
	for name, body := range bodies {
		if _, err := parseBody(body); err == nil {
			t.Errorf("%s: parseBody accepted %v", name, body)
		}
		if _, err := Decode(wrap(t, body)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Decode error %v, want ErrCorrupt", name, err)
		}
	}
	// The smallest valid body: client "a" owning "r1".
	rec, err := Decode(wrap(t, []byte{2, 4, 1, 0, 1, 'a', 1, 0, 2, 'r', '1', 0}))
	if err != nil || rec.Term != 1 || rec.Generation != 2 || !rec.Assignment.Equal(Assignment{"a": {"r1"}}) {
		t.Fatalf("minimal body: %+v, %v", rec, err)
	}
}

// wrap frames a body as Encode does.
func wrap(t *testing.T, body []byte) []byte {
	t.Helper()
	b, err := Encode(Record{})
	if err != nil {
		t.Fatal(err)
	}
	// Re-encode the given body with the same framing.
	var buf bytes.Buffer
	z := deflate(t, body)
	buf.Write(b[:len(magic)+1])
	buf.Write(crc(z))
	buf.Write(z)
	return buf.Bytes()
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestErrorsArePrefixed(t *testing.T) {
	for _, err := range []error{ErrCorrupt, ErrTooLarge, ErrInvalid} {
		if !strings.HasPrefix(err.Error(), "alloc: ") {
			t.Errorf("%v: want the package prefix", err)
		}
	}
}
