package election

import "testing"

// A revocation request counts only for the term it names: one left from an
// earlier term, or foreign data, must not make a new leader give up.
func TestRevocationRequestNamesATerm(t *testing.T) {
	for _, tc := range []struct {
		data string
		term int64
		want bool
	}{
		{"7", 7, true},
		{"7", 8, false},
		{"8", 7, false},
		{"", 0, false},
		{"07", 7, false},
		{"__REVOKE__", 7, false},
		{"-2147483648", -2147483648, true},
	} {
		if got := requestFor([]byte(tc.data), tc.term); got != tc.want {
			t.Errorf("requestFor(%q, %d) = %v, want %v", tc.data, tc.term, got, tc.want)
		}
	}
}
