package tree

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// DeleteAll deletes a tree bottom-up in transactions, says how many nodes
// it deleted, and refuses /.
func TestDeleteAll(t *testing.T) {
	s := connect(t)
	ctx := testkit.Ctx(t, 60*time.Second)
	want := 1
	for i := 0; i < 30; i++ {
		for j := 0; j < 20; j++ {
			if err := s.EnsurePath(ctx, fmt.Sprintf("/t/n%d/m%d", i, j)); err != nil {
				t.Fatal(err)
			}
			want++
		}
		want++
	}
	n, err := DeleteAll(ctx, s, "/t")
	if err != nil || n != want {
		t.Fatalf("DeleteAll = %d, %v; want %d deleted", n, err, want)
	}
	if ok, _, err := s.Exists(ctx, "/t"); err != nil || ok {
		t.Fatalf("/t after DeleteAll: exists %v, %v", ok, err)
	}
	if n, err := DeleteAll(ctx, s, "/t"); err != nil || n != 0 {
		t.Fatalf("DeleteAll of a missing node = %d, %v", n, err)
	}
	if _, err := DeleteAll(ctx, s, "/"); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("DeleteAll(/) = %v, want ErrInvalidPath", err)
	}
}

// A node deleted while Walk goes down the tree is left out with what was
// below it; DeleteAll deletes the rest and counts only what it deleted.
func TestWalkAndDeleteAllWithANodeGoneMidWalk(t *testing.T) {
	s := connect(t)
	ctx := testkit.Ctx(t, 60*time.Second)
	build := func() {
		t.Helper()
		for _, p := range []string{"/t/a/b/c", "/t/a/d", "/t/e"} {
			if err := s.EnsurePath(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The hook deletes /t/a/b once the walk has found it, just before
	// the walk lists it.
	vanished := 0
	walkHook = func(p string) {
		if p != "/t/a/b" {
			return
		}
		if _, err := s.Multi(ctx, zkcoord.DeleteOp("/t/a/b/c", -1), zkcoord.DeleteOp("/t/a/b", -1)); err != nil {
			t.Errorf("deleting /t/a/b mid-walk: %v", err)
		}
		vanished++
	}
	defer func() { walkHook = nil }()

	build()
	nodes, err := Walk(ctx, s, "/t")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i, n := range nodes {
		if n.Err != nil || n.Stat == nil {
			t.Errorf("%s: stat %v, error %v", n.Path, n.Stat, n.Err)
		}
		if i > 0 && strings.Count(n.Path, "/") < strings.Count(nodes[i-1].Path, "/") {
			t.Errorf("%s listed after the deeper %s", n.Path, nodes[i-1].Path)
		}
		if n.Path == "/t/a" && n.Stat.NumChildren != 2 {
			t.Errorf("/t/a: stat says %d children, want 2 (b was still there)", n.Stat.NumChildren)
		}
		paths = append(paths, n.Path)
	}
	slices.Sort(paths)
	if want := []string{"/t", "/t/a", "/t/a/d", "/t/e"}; !slices.Equal(paths, want) {
		t.Errorf("Walk with /t/a/b gone mid-walk = %q, want %q", paths, want)
	}

	build()
	if n, err := DeleteAll(ctx, s, "/t"); err != nil || n != 4 {
		t.Errorf("DeleteAll with /t/a/b gone mid-walk = %d, %v; want 4 deleted", n, err)
	}
	if vanished != 2 {
		t.Errorf("the hook deleted /t/a/b %d times, want 2", vanished)
	}
	if _, err := Walk(ctx, s, "/t"); !errors.Is(err, zkcoord.ErrNoNode) {
		t.Errorf("Walk of a missing node = %v, want ErrNoNode", err)
	}
}
