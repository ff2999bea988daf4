package cache

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// holds pauses the cache's reads at chosen paths, one after the other, so
// that a test can change the tree at a known point between two reads.
type holds struct {
	mu   sync.Mutex
	next []*hold
}

// hold is one pause: reached closes when the cache is about to read path;
// the read goes on once release is called.
type hold struct {
	path    string
	reached chan struct{}
	free    chan struct{}
	once    sync.Once
}

func (h *hold) release() { h.once.Do(func() { close(h.free) }) }

// holdReads installs the read hook; it must be called before the cache
// starts. Every hold is released when the test ends.
func holdReads(t *testing.T) *holds {
	hs := &holds{}
	readHook = hs.hook
	t.Cleanup(func() {
		hs.mu.Lock()
		for _, h := range hs.next {
			h.release()
		}
		hs.next = nil
		hs.mu.Unlock()
		readHook = nil
	})
	return hs
}

// at queues a pause at the next read of path that comes after the pauses
// queued before it.
func (hs *holds) at(t *testing.T, path string) *hold {
	h := &hold{path: path, reached: make(chan struct{}), free: make(chan struct{})}
	t.Cleanup(h.release)
	hs.mu.Lock()
	hs.next = append(hs.next, h)
	hs.mu.Unlock()
	return h
}

func (hs *holds) hook(path string) {
	hs.mu.Lock()
	if len(hs.next) == 0 || hs.next[0].path != path {
		hs.mu.Unlock()
		return
	}
	h := hs.next[0]
	hs.next = hs.next[1:]
	hs.mu.Unlock()
	close(h.reached)
	<-h.free
}

// reached waits until the cache is about to read h's path.
func (h *hold) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.reached:
	case <-testkit.Ctx(t, wait).Done():
		t.Fatalf("the cache never read %s", h.path)
	}
}

// On one-shot watches, a child deleted and created again after its
// parent's children changed and before the parent is listed again: the
// listing still names it, and the old node's deletion arrives after the
// listing. The cache reports the old node removed and the new one added,
// and follows the new one.
func TestChildCreatedAgainBeforeItsParentIsListed(t *testing.T) {
	withoutPersistentWatches(t)
	writer := connect(t)
	mk(t, writer, "/p", "/p/a=old")
	hs := holdReads(t)
	sess := connect(t)
	c := started(t)(NewChildren(sess, "/p"))
	r := record(t, c)
	i := r.expect(t, 0, "Added /p/a", "Initialized")

	listing := hs.at(t, "/p")
	mk(t, writer, "/p/b") // the parent's children change: it is listed again
	listing.wait(t)
	del(t, writer, "/p/a")
	mk(t, writer, "/p/a=new")
	listing.release()

	i = r.expect(t, i, "Added /p/b", "Removed /p/a", "Added /p/a")
	if got := data(c, "/p/a"); got != "new" {
		t.Errorf("Get /p/a = %q, want new", got)
	}
	if got := c.Children("/p"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Children /p = %q", got)
	}
	set(t, writer, "/p/a", "newer")
	r.expect(t, i, "Updated /p/a")
}

// On one-shot watches, a child deleted between its parent's listing and
// its own read, then created again before the parent is listed once more:
// the cache never held it, so the next listing reads it, and Children
// never names a node that Get does not have.
func TestChildGoneBeforeItsReadIsReadWhenCreatedAgain(t *testing.T) {
	withoutPersistentWatches(t)
	writer := connect(t)
	mk(t, writer, "/q")
	hs := holdReads(t)
	sess := connect(t)
	c := started(t)(NewChildren(sess, "/q"))
	r := record(t, c)
	i := r.expect(t, 0, "Initialized")

	read := hs.at(t, "/q/a")
	relist := hs.at(t, "/q")
	mk(t, writer, "/q/a=1")
	read.wait(t) // listed, not read yet
	del(t, writer, "/q/a")
	read.release()
	relist.wait(t) // the deletion makes the cache list /q again
	if got := c.Children("/q"); len(got) != 0 {
		t.Errorf("Children /q = %q while the cache holds %v", got, c.Snapshot())
	}
	mk(t, writer, "/q/a=2")
	relist.release()

	i = r.expect(t, i, "Added /q/a")
	if got := data(c, "/q/a"); got != "2" {
		t.Errorf("Get /q/a = %q, want 2", got)
	}
	set(t, writer, "/q/a", "3")
	r.expect(t, i, "Updated /q/a")
}

// A child the cache's Session may not read is reported Failed and is not
// cached; Children does not name it either.
func TestUnreadableChildIsNotListed(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		writer := connect(t)
		mk(t, writer, "/n", "/n/open=o")
		secret := connect(t, func(cfg *zkcoord.Config) {
			cfg.Auth = []zkcoord.Auth{{Scheme: "digest", Credential: "alice:pw"}}
			cfg.ACL = zkcoord.DigestACL(zkcoord.PermAll, "alice", "pw")
		})
		mk(t, secret, "/n/closed=c")
		sess := connect(t)
		c := started(t)(NewChildren(sess, "/n"))
		r := record(t, c)
		r.until(t, 0, "Initialized")

		var failed Event
		for _, ev := range r.snapshot() {
			if ev.Type == Failed {
				failed = ev
			}
		}
		if failed.Node.Path != "/n/closed" || !errors.Is(failed.Err, zkcoord.ErrNoAuth) {
			t.Errorf("Failed event %v, want /n/closed with ErrNoAuth", failed)
		}
		if got := c.Children("/n"); !slices.Equal(got, []string{"open"}) {
			t.Errorf("Children /n = %q, want only the readable child", got)
		}
		if _, ok := c.Get("/n/closed"); ok || c.Len() != 1 {
			t.Errorf("the unreadable child is cached: %v", c.Snapshot())
		}
	})
}
