package cache

import (
	"bytes"
	"crypto/rand"
	"errors"
	"slices"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func TestTreeLoadsThenFollowsChangesAtDepth(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		mk(t, sess, "/t=root", "/t/a=1", "/t/b=2", "/t/a/x=3")
		c := started(t)(NewTree(sess, "/t"))
		r := record(t, c)
		i := r.expect(t, 0, "Added /t", "Added /t/a", "Added /t/b", "Added /t/a/x", "Initialized")

		mk(t, sess, "/t/a/x/y=4")
		i = r.expect(t, i, "Added /t/a/x/y")
		set(t, sess, "/t/a/x/y", "5")
		i = r.expect(t, i, "Updated /t/a/x/y")
		set(t, sess, "/t", "root2")
		i = r.expect(t, i, "Updated /t")
		del(t, sess, "/t/a/x/y", "/t/b")
		i = r.expect(t, i, "Removed /t/a/x/y", "Removed /t/b")

		if got := data(c, "/t/a/x"); got != "3" {
			t.Errorf("Get /t/a/x = %q, want 3", got)
		}
		if got := c.Children("/t"); !slices.Equal(got, []string{"a"}) {
			t.Errorf("Children /t = %q", got)
		}
		snap := c.Snapshot()
		var paths []string
		for p := range snap {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		if want := []string{"/t", "/t/a", "/t/a/x"}; !slices.Equal(paths, want) {
			t.Errorf("Snapshot has %q, want %q", paths, want)
		}
		if string(snap["/t"].Data) != "root2" || snap["/t"].Stat.Version != 1 {
			t.Errorf("Snapshot /t = %q version %d", snap["/t"].Data, snap["/t"].Stat.Version)
		}
		if n := r.len(); n != i {
			t.Errorf("unexpected events: %q", r.events()[i:])
		}
	})
}

// TestTreeOfTheWholeTree: a cache may be rooted at "/" (here the test's
// chroot), depths counted from there.
func TestTreeOfTheWholeTree(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		mk(t, sess, "/a=1", "/a/b=2")
		c := started(t)(NewTree(sess, "/"))
		r := record(t, c)
		i := r.expect(t, 0, "Added /", "Added /a", "Added /a/b", "Initialized")
		mk(t, sess, "/c")
		i = r.expect(t, i, "Added /c")
		set(t, sess, "/a/b", "3")
		i = r.expect(t, i, "Updated /a/b")
		del(t, sess, "/a/b")
		r.expect(t, i, "Removed /a/b")
		if got := c.Children("/"); !slices.Equal(got, []string{"a", "c"}) {
			t.Errorf("Children / = %q", got)
		}

		shallow := started(t)(NewTree(sess, "/", WithMaxDepth(1)))
		r = record(t, shallow)
		i = r.expect(t, 0, "Added /", "Added /a", "Added /c", "Initialized")
		mk(t, sess, "/a/d", "/e")
		r.expect(t, i, "Added /e")
	})
}

func TestTreeDepthLimit(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		mk(t, sess, "/t", "/t/a", "/t/a/b", "/t/a/b/c")
		c := started(t)(NewTree(sess, "/t", WithMaxDepth(1)))
		r := record(t, c)
		i := r.expect(t, 0, "Added /t", "Added /t/a", "Initialized")

		// Below the limit nothing is watched: the next event is the change
		// at depth 1, not the creation at depth 2.
		mk(t, sess, "/t/a/z")
		set(t, sess, "/t/a/b", "x")
		set(t, sess, "/t/a", "y")
		i = r.expect(t, i, "Updated /t/a")
		mk(t, sess, "/t/n")
		r.expect(t, i, "Added /t/n")
		if got := c.Children("/t/a"); got != nil {
			t.Errorf("Children below the limit = %q, want none", got)
		}
		if _, ok := c.Get("/t/a/b"); ok {
			t.Error("a node below the limit is cached")
		}
	})
}

func TestTreeRootDeletedAndCreatedAgain(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		mk(t, sess, "/t=1", "/t/a", "/t/a/b")
		c := started(t)(NewTree(sess, "/t"))
		r := record(t, c)
		i := r.expect(t, 0, "Added /t", "Added /t/a", "Added /t/a/b", "Initialized")

		del(t, sess, "/t/a/b", "/t/a", "/t")
		i = r.expect(t, i, "Removed /t/a/b", "Removed /t/a", "Removed /t")
		if c.Len() != 0 {
			t.Errorf("cache holds %v after the root went", c.Snapshot())
		}
		mk(t, sess, "/t=2")
		i = r.expect(t, i, "Added /t")
		mk(t, sess, "/t/z")
		r.expect(t, i, "Added /t/z")
		if got := data(c, "/t"); got != "2" {
			t.Errorf("root data %q, want 2", got)
		}
	})
}

func TestNodeCacheOfAMissingNode(t *testing.T) {
	sess := connect(t)
	c := started(t)(NewNode(sess, "/n"))
	r := record(t, c)
	i := r.expect(t, 0, "Initialized")
	mk(t, sess, "/n=a")
	i = r.expect(t, i, "Added /n")
	mk(t, sess, "/n/child") // children are not a node cache's business
	set(t, sess, "/n", "b")
	i = r.expect(t, i, "Updated /n")
	if got := data(c, "/n"); got != "b" {
		t.Errorf("data %q, want b", got)
	}
	del(t, sess, "/n/child", "/n")
	r.expect(t, i, "Removed /n")
	if _, ok := c.Get("/n"); ok {
		t.Error("deleted node still cached")
	}
}

func TestChildrenCacheReportsChildrenOnly(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		mk(t, sess, "/p=parent", "/p/a=1", "/p/a/deep")
		c := started(t)(NewChildren(sess, "/p"))
		r := record(t, c)
		i := r.expect(t, 0, "Added /p/a", "Initialized")
		mk(t, sess, "/p/b=2")
		i = r.expect(t, i, "Added /p/b")
		set(t, sess, "/p", "parent2") // the parent is not reported
		set(t, sess, "/p/b", "3")
		i = r.expect(t, i, "Updated /p/b")
		if got := c.Children("/p"); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("Children = %q", got)
		}
		n, ok := c.Get("/p/b")
		if !ok || string(n.Data) != "3" || n.Stat.Version != 1 {
			t.Errorf("Get /p/b = %q version %d, %v", n.Data, n.Stat.Version, ok)
		}
		if _, ok := c.Get("/p"); ok {
			t.Error("the parent is part of a children cache")
		}
		if got := len(c.Snapshot()); got != 2 {
			t.Errorf("Snapshot has %d nodes, want 2", got)
		}
		del(t, sess, "/p/a/deep", "/p/a", "/p/b", "/p")
		r.expect(t, i, "Removed /p/a", "Removed /p/b")
	})
}

func TestLargeAndBinaryData(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		big := make([]byte, 1000*1000)
		rand.Read(big)
		bad := []byte{0xff, 0xfe, 0x00, 0xc3, 0x28} // not UTF-8, with a NUL
		mk(t, sess, "/d")
		put(t, sess, "/d/big", big)
		put(t, sess, "/d/bad", bad)
		c := started(t)(NewTree(sess, "/d"))
		r := record(t, c)
		i := r.expect(t, 0, "Added /d", "Added /d/bad", "Added /d/big", "Initialized")
		if n, _ := c.Get("/d/big"); !bytes.Equal(n.Data, big) {
			t.Errorf("large data differs (%d bytes cached)", len(n.Data))
		}
		if n, _ := c.Get("/d/bad"); !bytes.Equal(n.Data, bad) {
			t.Errorf("binary data = %x, want %x", n.Data, bad)
		}
		big[0]++
		put(t, sess, "/d/big", big)
		r.expect(t, i, "Updated /d/big")
		if n, _ := c.Get("/d/big"); !bytes.Equal(n.Data, big) {
			t.Error("updated large data differs")
		}
	})
}

func TestInvalidArguments(t *testing.T) {
	sess := connect(t)
	for _, p := range []string{"", "t", "/t/", "/t//a", "/t/./a"} {
		if _, err := NewTree(sess, p); !errors.Is(err, ErrInvalid) || !errors.Is(err, zkcoord.ErrInvalidPath) {
			t.Errorf("NewTree(%q): %v, want ErrInvalid and ErrInvalidPath", p, err)
		}
	}
	if _, err := NewNode(nil, "/t"); !errors.Is(err, zkcoord.ErrNilSession) {
		t.Errorf("NewNode(nil): %v, want ErrNilSession", err)
	}
}

func TestSlowReaderLosesNothingAndBlocksNothing(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		mk(t, sess, "/q")
		c := started(t)(NewChildren(sess, "/q"))
		t.Cleanup(func() { c.Close(testkit.Ctx(t, wait)) })
		// Nobody reads events while the children are created: the cache keeps
		// following.
		const n = 100
		for k := 0; k < n; k++ {
			put(t, sess, zkcoord.Join("/q", string(rune('a'+k%26))+string(rune('a'+k/26))), nil)
		}
		testkit.Eventually(t, wait, "all children cached", func() bool { return c.Len() == n })
		added := 0
		for ev := range c.Events() {
			if ev.Type == Added {
				added++
			}
			if added == n {
				break
			}
		}
		if added != n {
			t.Errorf("%d Added events, want %d", added, n)
		}
	})
}

func TestSessionEndClosesTheCache(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		c := started(t)(NewTree(sess, "/t"))
		r := record(t, c)
		i := r.expect(t, 0, "Initialized")
		sess.Close(testkit.Ctx(t, wait))
		r.expect(t, i, "StateChanged Closed")
		<-r.done // the channel was closed
		<-c.Done()
		if !errors.Is(c.Err(), zkcoord.ErrSessionClosed) {
			t.Errorf("Err = %v, want ErrSessionClosed", c.Err())
		}
	})
}
