//go:build unix

package main

import (
	"strings"
	"testing"
)

// counter get reads: on a missing counter it says so, exits 1 and creates
// nothing, neither the counter nor its parents; on an existing one it
// prints the count.
func TestCounterGetMissing(t *testing.T) {
	t.Parallel()
	parent := unique(t)
	path := parent + "/jobs/done"
	r := zkc(t, "counter", "get", path, "--seed", "5")
	if r.code != exitFailure || !strings.Contains(r.stderr, path+": no such counter") || r.stdout != "" {
		t.Errorf("counter get of a missing counter: %s", r)
	}
	sess := session(t)
	for _, p := range []string{path, parent + "/jobs", parent} {
		if ok, _, err := sess.Exists(t.Context(), p); err != nil || ok {
			t.Errorf("after counter get of a missing counter, %s exists: %v (%v)", p, ok, err)
		}
	}
	mustZkc(t, "counter", "set", path, "12")
	if out := mustZkc(t, "counter", "get", path); out != "12\n" {
		t.Errorf("counter get: %q, want 12", out)
	}
}
