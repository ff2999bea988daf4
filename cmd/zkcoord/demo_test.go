package main

import (
	"strings"
	"testing"
)

// The demo plays its whole script against a ZooKeeper server of its own and
// passes; it leaves nothing running (it checks that itself, by a mark in the
// environment of every process it starts).
func TestDemo(t *testing.T) {
	t.Parallel()
	r := zkc(t, "demo", "--plain")
	if r.code != 0 || !strings.Contains(r.stdout, "VERDICT: PASS") {
		t.Fatalf("demo: %s", r)
	}
	for _, want := range []string{"step 6 done", "rebalancing #", "no resource ever ran twice at once", "stopping ZooKeeper"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}

// With --zk, the demo uses the given servers, in a group of its own that it
// deletes at the end.
func TestDemoExternal(t *testing.T) {
	t.Parallel()
	r := zkc(t, "demo", "--zk", cluster.ConnectString(), "--workers", "2", "--resources", "5")
	if r.code != 0 || !strings.Contains(r.stdout, "VERDICT: PASS") {
		t.Fatalf("demo: %s", r)
	}
	sess := session(t)
	kids, _, err := sess.Children(t.Context(), "/zkcoord/rebalance")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if strings.HasPrefix(k, "demo-") {
			t.Errorf("the demo left its group %s behind", k)
		}
	}
}
