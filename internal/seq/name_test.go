package seq

import (
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		n    int32
		want string
	}{
		{0, "0000000000"},
		{1, "0000000001"},
		{42, "0000000042"},
		{math.MaxInt32 - 1, "2147483646"},
		{math.MaxInt32, "2147483647"},  // the last number before the wrap
		{math.MinInt32, "-2147483648"}, // the first after it
		{math.MinInt32 + 1, "-2147483647"},
		{-1000000000, "-1000000000"},
		{-999999999, "-999999999"}, // ten characters from here on
		{-1, "-000000001"},
	} {
		if got := Format(tc.n); got != tc.want {
			t.Errorf("Format(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int32
		ok   bool
	}{
		{"0000000000", 0, true},
		{"0000000001", 1, true},
		{"2147483647", math.MaxInt32, true},
		{"-2147483648", math.MinInt32, true},
		{"-2147483647", math.MinInt32 + 1, true},
		{"-1000000000", -1000000000, true},
		{"-999999999", -999999999, true},
		{"-000000001", -1, true},
		{"2147483648", 0, false},  // beyond int32
		{"-2147483649", 0, false}, // likewise
		{"9999999999", 0, false},
		{"-0000000001", 0, false}, // %010d never prints this
		{"-000000000", 0, false},  // nor a negative zero
		{"000000001", 0, false},   // too short
		{"00000000001", 0, false}, // too long
		{"+000000001", 0, false},
		{" 000000001", 0, false},
		{"000000000a", 0, false},
		{"0x00000001", 0, false},
		{"00000_0001", 0, false},
		{"--00000001", 0, false},
		{"٠٠٠٠٠٠٠٠٠١", 0, false}, // digits, but not ASCII
		{"", 0, false},
	} {
		got, ok := Parse(tc.s)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tc.s, got, ok, tc.want, tc.ok)
		}
	}
}

func TestWrapped(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"0000000000", false},
		{"2147483647", false}, // the last number before the wrap
		{"-2147483648", true}, // the first after it
		{"-1000000000", true},
		{"-999999999", true},
		{"-000000001", true},   // the last before the counter is back at zero
		{"-0000000001", false}, // not a suffix ZooKeeper prints
		{"-abc", false},
		{"", false},
	} {
		if got := Wrapped(tc.s); got != tc.want {
			t.Errorf("Wrapped(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestAfter(t *testing.T) {
	for _, tc := range []struct{ name, marker, want string }{
		{"_c_2f0ca1d0-96a3-4f0e-8a51-6a0d3b3f7c11-latch-0000000007", "latch-", "0000000007"},
		{"_c_2f0ca1d0-96a3-4f0e-8a51-6a0d3b3f7c11-lock--2147483648", "lock-", "-2147483648"},
		{"lock-0000000001-lock-0000000002", "lock-", "0000000002"}, // the last occurrence
		{"ends-with-latch-", "latch-", ""},
		{"no-marker", "latch-", "no-marker"}, // the whole name
		{"", "lock-", ""},
		{"0123456789abcdef0123456789abcdef__lock__-000000003", "__lock__", "-000000003"},
	} {
		if got := After(tc.name, tc.marker); got != tc.want {
			t.Errorf("After(%q, %q) = %q, want %q", tc.name, tc.marker, got, tc.want)
		}
	}
}
