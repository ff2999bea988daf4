package rebalance

import (
	"errors"
	"fmt"
	"testing"

	"github.com/zkcoord/zkcoord"
)

func TestParseClients(t *testing.T) {
	uuid := "0a1b2c3d-0000-4000-8000-00000000000"
	node := func(i int, seq string) string { return fmt.Sprintf("_c_%s%d-c_%s", uuid, i, seq) }
	kids := []string{
		node(1, "0000000010"),
		"c_0000000001",         // not protected: foreign
		node(2, "-2147483648"), // wrapped sequence: the newest
		node(3, "0000000002"),
		node(4, "notanumber"),     // foreign
		node(6, "42"),             // not as ZooKeeper prints: foreign
		"_c_garbage-c_0000000003", // bad uuid: foreign
		node(5, "0000000002"),     // duplicate id: ignored
		"lock-0000000004",         // foreign
	}
	got := clientIDs(parseClients(kids))
	want := []string{"c_0000000002", "c_0000000010", "c_-2147483648"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parseClients: %v, want %v", got, want)
	}
}

// TestClientOrderAcrossTheWrap: the coordinator is the oldest client, also
// after the sequence counter of clients/ wrapped, so that a client joining
// after the wrap does not take over from a running coordinator.
func TestClientOrderAcrossTheWrap(t *testing.T) {
	for _, created := range [][]string{
		{"0000000000", "0000000001", "2147483647"},
		{"2147483646", "2147483647", "-2147483648", "-2147483647"},
		{"-1000000000", "-999999999", "-000000001", "0000000000", "0000000001"},
	} {
		var kids []string
		for i, s := range created {
			kids = append([]string{fmt.Sprintf("_c_0a1b2c3d-0000-4000-8000-%012d-c_%s", i, s)}, kids...)
		}
		got := clientIDs(parseClients(kids))
		for i, s := range created {
			if got[i] != "c_"+s {
				t.Fatalf("order %v, created %v", got, created)
			}
		}
	}
}

func TestParseResourcesAndCheckIns(t *testing.T) {
	res := parseResources([]string{"b", "a", "_c_0a1b2c3d-0000-4000-8000-000000000001-x"})
	if fmt.Sprint(res) != "[a b]" {
		t.Fatalf("parseResources: %v", res)
	}
	if id, gen, ok := parseCheckIn(checkInName("c_0000000007", 12)); !ok || id != "c_0000000007" || gen != 12 {
		t.Fatalf("parseCheckIn: %q %d %v", id, gen, ok)
	}
	for _, bad := range []string{"", "x", ".5", "c_1.x"} {
		if _, _, ok := parseCheckIn(bad); ok {
			t.Errorf("parseCheckIn(%q) accepted", bad)
		}
	}
}

func TestDecodeStatus(t *testing.T) {
	if st, err := decodeStatus(nil); err != nil || st.Phase != "" {
		t.Fatalf("empty: %+v %v", st, err)
	}
	good := mustJSON(statusInfo{Phase: PhaseResourcesAssigned, Generation: 3, Term: 2})
	if st, err := decodeStatus(good); err != nil || st.Generation != 3 {
		t.Fatalf("good: %+v %v", st, err)
	}
	for _, bad := range []string{"garbage", `{"phase":"Dance"}`, "\xa7za\x01"} {
		if _, err := decodeStatus([]byte(bad)); !errors.Is(err, zkcoord.ErrBadData) {
			t.Errorf("decodeStatus(%q): %v, want ErrBadData", bad, err)
		}
	}
}

func TestModesAndOptions(t *testing.T) {
	for _, m := range []Mode{Incremental, ResourceBarrier, GlobalBarrier} {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMode("fast"); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("ParseMode(fast): %v", err)
	}
	for i, opt := range []Option{WithMode(Mode(7)), WithMinInterval(-1), WithStartDelay(-1), WithLockDelay(-1),
		WithSelfExpiry(1), WithSelfExpiry(-0.5), WithMaxRecoveryBackoff(0)} {
		if _, err := newClient("/g", Handler{}, []Option{opt}); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("option %d accepted: %v", i, err)
		}
	}
	for _, g := range []string{"", "a/b", "..", "/", "/a/"} {
		if _, err := newClient(g, Handler{}, nil); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("group path %q accepted: %v", g, err)
		}
	}
}
