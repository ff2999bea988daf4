//go:build unix

package main

import (
	"strings"
	"testing"
)

// With --lock-delay, a release by a holder that also had it lets the next
// --try take the lock at once; one by a holder without it counts as an
// expiry, and --try refuses during the delay.
func TestLockDelayFlag(t *testing.T) {
	t.Parallel()
	path := unique(t)
	mustZkc(t, "lock", path, "--lock-delay", "10m", "--", "true")
	if r := zkc(t, "lock", path, "--lock-delay", "10m", "--try", "--", "true"); r.code != 0 {
		t.Fatalf("--try after a marked release: %s", r)
	}
	mustZkc(t, "lock", path, "--", "true")
	r := zkc(t, "lock", path, "--lock-delay", "10m", "--try", "--", "true")
	if r.code != exitFailure || !strings.Contains(r.stderr, "lock-delay") {
		t.Fatalf("--try after an unmarked release: %s", r)
	}
	for _, args := range [][]string{
		{"lock", path, "--lock-delay", "1s", "--read", "--", "true"},
		{"lock", path, "--lock-delay", "-1s", "--", "true"},
		{"elect", path + "-e", "--lock-delay", "-1s", "--", "true"},
	} {
		if r := zkc(t, args...); r.code != exitUsage {
			t.Errorf("%v: %s, want exit %d", args, r, exitUsage)
		}
	}
}
