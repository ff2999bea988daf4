package queue

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/seq"
)

// The names Curator 5.4 writes, taken from its priorityToString,
// epochToString and makeIdPath for the same arguments.
func TestCuratorNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{priorityName(0), "queue-100000000"},
		{priorityName(10), "queue-10000000A"},
		{priorityName(2147483647), "queue-17FFFFFFF"},
		{priorityName(-1), "queue-0FFFFFFFF"},
		{priorityName(-2147483648), "queue-080000000"},
		{delayName(1), "queue-|00000001|"},
		{delayName(1700000000000), "queue-|18BCFE56800|"},
		{idName("order-7"), "queue-|order-7|"},
		{idName("a/b|c"), "queue-|a_b_c|"},
	} {
		if c.got != c.want {
			t.Errorf("got %q; want %q", c.got, c.want)
		}
	}
}

func TestCuratorPriorityOrder(t *testing.T) {
	var names []string
	for i, p := range []int32{5, -3, 0, 2147483647, -2147483648, 5, -1} {
		names = append(names, priorityName(p)+seq.Format(int32(i)))
	}
	priorityLayout.sort(names)
	var got []int32
	for _, n := range names {
		p, err := strconv.ParseUint(n[len("queue-1"):len("queue-1")+8], 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, int32(p))
	}
	want := []int32{-2147483648, -3, -1, 0, 5, 5, 2147483647}
	if !slices.Equal(got, want) {
		t.Fatalf("served in priority order %v; want %v (names %v)", got, want, names)
	}
	if names[4] != priorityName(5)+seq.Format(0) {
		t.Fatalf("equal priorities out of put order: %v", names)
	}
}

func TestCuratorDelayOrderAndDue(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	ms := now.UnixMilli()
	names := []string{
		delayName(ms+1000) + "0000000000",
		delayName(ms-5) + "0000000001",
		"queue-0000000002", // no due time: due at once, as in Curator
		delayName(ms) + "0000000003",
		"queue-|zz|0000000004", // not hexadecimal: due at once
	}
	delayLayout.sort(names)
	ready, next := delayLayout.due(names, now)
	want := []string{
		"queue-0000000002",
		"queue-|zz|0000000004",
		delayName(ms-5) + "0000000001",
		delayName(ms) + "0000000003",
	}
	if !slices.Equal(ready, want) {
		t.Fatalf("ready = %v; want %v", ready, want)
	}
	if !next.Equal(now.Add(time.Second)) {
		t.Fatalf("next due %v; want %v", next, now.Add(time.Second))
	}
	if r, n := fifoLayout.due(names, now); len(r) != len(names) || !n.IsZero() {
		t.Fatalf("a FIFO layout holds items back: %v %v", r, n)
	}
}

func TestCuratorDueMillis(t *testing.T) {
	for _, c := range []struct {
		name string
		want int64
	}{
		{"queue-|0000000A|0000000001", 10},
		{"queue-|18BCFE56800|0000000001", 1700000000000},
		{"|0000000A|0000000001", 0}, // the first separator at the start: Curator reads 0
		{"queue-||0000000001", 0},
		{"queue-0000000001", 0},
		{"queue-|7FFFFFFFFFFFFFFFF|1", 0}, // overflow
		{"queue-|-A|1", -10},
	} {
		if got := dueMillis(c.name); got != c.want {
			t.Errorf("dueMillis(%q) = %d; want %d", c.name, got, c.want)
		}
	}
}

func TestCuratorIDOrderAndSplit(t *testing.T) {
	for _, c := range []struct{ name, id, rest string }{
		{"queue-|order-7|0000000003", "order-7", "queue-0000000003"},
		{"queue-0000000003", "queue-0000000003", "queue-0000000003"},
		{"queue-|x0000000003", "queue-|x0000000003", "queue-|x0000000003"},
		{"queue-||0000000003", "", "queue-0000000003"},
	} {
		if id, rest := splitID(c.name); id != c.id || rest != c.rest {
			t.Errorf("splitID(%q) = %q, %q; want %q, %q", c.name, id, rest, c.id, c.rest)
		}
	}
	names := []string{"queue-|b|0000000002", "queue-|a|0000000003", "queue-|zz|0000000001"}
	idLayout.sort(names)
	if want := []string{"queue-|zz|0000000001", "queue-|b|0000000002", "queue-|a|0000000003"}; !slices.Equal(names, want) {
		t.Fatalf("id items served %v; want by sequence %v", names, want)
	}
}

func TestCuratorItemsRoundTrip(t *testing.T) {
	for _, items := range [][][]byte{
		{[]byte("one")},
		{{}, []byte("b"), bytes.Repeat([]byte{0xff}, 300)},
	} {
		got, err := decodeItems(encodeItems(items))
		if err != nil || len(got) != len(items) {
			t.Fatalf("decode(encode(%q)) = %q, %v", items, got, err)
		}
		for i := range items {
			if !bytes.Equal(got[i], items[i]) {
				t.Fatalf("item %d = %q; want %q", i, got[i], items[i])
			}
		}
	}
	// Curator's framing of "hi", byte for byte.
	want := []byte{0, 1, 0, 1, 1, 0, 0, 0, 2, 'h', 'i', 2}
	if got := encodeItems([][]byte{[]byte("hi")}); !bytes.Equal(got, want) {
		t.Fatalf("encode(hi) = %v; want %v", got, want)
	}
}

func TestCuratorCorruptItems(t *testing.T) {
	ok := encodeItems([][]byte{[]byte("hi")})
	for name, b := range map[string][]byte{
		"empty":         {},
		"raw bytes":     []byte("hello"),
		"wrong version": append([]byte{0, 2, 0, 1}, ok[4:]...),
		"no end":        ok[:len(ok)-1],
		"cut item":      ok[:8],
		"bad opcode":    {0, 1, 0, 1, 7},
		"negative size": {0, 1, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 2},
		"trailing":      append(slices.Clone(ok), 0),
	} {
		if items, err := decodeItems(b); err == nil {
			t.Errorf("%s: decoded %q; want an error", name, items)
		}
	}
	err := error(&CorruptError{Path: "/q/queue-0000000001", Data: []byte("x"), Err: errors.New("bad")})
	if !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("CorruptError does not wrap ErrBadData: %v", err)
	}
}

func FuzzCuratorItems(f *testing.F) {
	f.Add(encodeItems([][]byte{[]byte("a"), {}}))
	f.Add([]byte{0, 1, 0, 1, 1, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := decodeItems(b)
		if err != nil {
			return
		}
		if again := encodeItems(items); !bytes.Equal(again, b) {
			t.Fatalf("decoded %q from %x, which encodes as %x", items, b, again)
		}
	})
}

func FuzzCuratorNames(f *testing.F) {
	f.Add("queue-|18BCFE56800|0000000001", int64(1700000000000), int32(-3), int32(7))
	f.Add("queue-|id|0000000001", int64(1), int32(0), int32(-1))
	f.Fuzz(func(t *testing.T, name string, ms int64, p1, p2 int32) {
		id, rest := splitID(name)
		if id == name && rest != name || id != name && len(id)+len(rest)+2*len(curatorSep) != len(name) {
			t.Fatalf("splitID(%q) = %q, %q", name, id, rest)
		}
		if ms > 0 {
			if got := dueMillis(delayName(ms) + "0000000001"); got != ms {
				t.Fatalf("due time %d read back as %d", ms, got)
			}
		}
		if got, want := seq.CompareText(priorityName(p1), priorityName(p2)), cmp.Compare(p1, p2); got != want {
			t.Fatalf("priorities %d, %d: names compare %d", p1, p2, got)
		}
		dueMillis(name)
		names := []string{name, "queue-0000000001"}
		for _, l := range []layout{fifoLayout, priorityLayout, delayLayout, idLayout} {
			l.sort(names)
		}
	})
}
