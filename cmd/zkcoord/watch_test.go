//go:build unix

package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// watch prints the initial nodes, Initialized, then every change of the
// subtree as it happens.
func TestWatchTree(t *testing.T) {
	t.Parallel()
	sess := session(t)
	ctx := testkit.Ctx(t, time.Minute)
	path := unique(t)
	if err := sess.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, path+"/a", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	w := start(t, nil, "watch", path, "--tree", "--json", "--depth", "1")
	events := func() []watchEvent {
		var evs []watchEvent
		for _, l := range w.stdout() {
			var ev watchEvent
			if json.Unmarshal([]byte(l), &ev) != nil {
				t.Fatalf("not JSON: %q", l)
			}
			evs = append(evs, ev)
		}
		return evs
	}
	has := func(typ, p string) bool {
		return slices.ContainsFunc(events(), func(ev watchEvent) bool { return ev.Type == typ && ev.Path == p })
	}
	testkit.Eventually(t, 30*time.Second, "the initial load", func() bool {
		return slices.ContainsFunc(events(), func(ev watchEvent) bool { return ev.Type == "Initialized" })
	})
	if !has("Added", path) || !has("Added", path+"/a") {
		t.Fatalf("initial events: %+v", events())
	}
	if _, err := sess.Set(ctx, path+"/a", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, path+"/b", nil, 0); err != nil {
		t.Fatal(err)
	}
	// The cache reads a changed node to report its data: a node deleted
	// before that read is reported Removed, its update never seen. So the
	// delete waits for the update to show.
	testkit.Eventually(t, 30*time.Second, "the update and the new node", func() bool {
		return has("Updated", path+"/a") && has("Added", path+"/b")
	})
	if err := sess.Delete(ctx, path+"/a", -1); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the removal", func() bool { return has("Removed", path+"/a") })
	// Text form, and a node that does not exist yet.
	n := start(t, nil, "watch", path+"/later")
	testkit.Eventually(t, 30*time.Second, "Initialized", func() bool { return slices.Contains(n.stdout(), "Initialized") })
	if _, err := sess.Create(ctx, path+"/later", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the node to show", func() bool {
		return slices.ContainsFunc(n.stdout(), func(l string) bool {
			return strings.HasPrefix(l, "Added "+path+"/later version 0 data \"x\"")
		})
	})
	if r := zkc(t, "watch", path, "--depth", "2"); r.code != exitUsage {
		t.Errorf("--depth without --tree: %s", r)
	}
}
