package cache

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// The tests of the cache on one recursive watch, for what it does its own
// way: the watch itself, and the races between its events and the reads
// they cause. The tests run with bothWays cover the rest.

// watchedBy returns the paths of the data watches the server holds for a
// Session (wchc; a recursive watch is listed on its node) and how many
// watches it holds in all (mntr).
func watchedBy(t *testing.T, sess *zkcoord.Session) (paths []string, total int, err error) {
	ctx := testkit.Ctx(t, wait)
	srv := cluster.Server(0)
	by, err := srv.Wchc(ctx)
	if err != nil {
		return nil, 0, err
	}
	total, err = srv.WatchCount(ctx)
	return by[sess.ID()], total, err
}

// A tree cache holds one watch, on its root, however large the tree, and
// Close removes it. A server before 3.9 cannot remove a recursive watch
// alone (removing "any" watch would take the Session's other watches on
// the path with it): the Session forgets it and the server drops it with
// the connection. So once the cache is closed and the Session has
// reconnected, the server holds no watch for it, whatever its version.
func TestTreeHoldsOneWatchUntilClose(t *testing.T) {
	writer := connect(t)
	mk(t, writer, "/w", "/w/a", "/w/a/b", "/w/c")
	proxy := cluster.NewProxy(t)
	sess := testkit.Connect(t, proxy.Servers())
	c := started(t)(NewTree(sess, "/w"))
	r := record(t, c)
	r.until(t, 0, "Initialized")
	paths, _, err := watchedBy(t, sess)
	if want := []string{testkit.Chroot(t) + "/w"}; err != nil || !slices.Equal(paths, want) {
		t.Fatalf("watches of the cache's session: %q (%v), want %q", paths, err, want)
	}

	ctx := testkit.Ctx(t, wait)
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-r.done
	states := sess.Watch(ctx)
	<-states // the current one
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	for st := range states {
		if st.State == zkcoord.Reconnected {
			break
		}
	}
	testkit.WaitFor(t, wait, "no watch left", func() error {
		paths, total, err := watchedBy(t, sess)
		if err != nil {
			return err
		}
		if len(paths) != 0 || total != 0 {
			return fmt.Errorf("%w: the session watches %q, %d watches in all", testkit.ErrNotYet, paths, total)
		}
		return nil
	})
	if n := r.len(); r.events()[n-1] != "Initialized" {
		t.Errorf("events after Close: %q", r.events())
	}
}

// Two caches of one Session on one path, as two discovery providers of
// one service: closing one leaves the other following.
func TestClosingOneOfTwoCachesOnAPath(t *testing.T) {
	sess := connect(t)
	mk(t, sess, "/s", "/s/a")
	one := started(t)(NewChildren(sess, "/s"))
	r1 := record(t, one)
	r1.expect(t, 0, "Added /s/a", "Initialized")
	two := started(t)(NewChildren(sess, "/s"))
	r2 := record(t, two)
	i := r2.expect(t, 0, "Added /s/a", "Initialized")
	if err := one.Close(testkit.Ctx(t, wait)); err != nil {
		t.Fatal(err)
	}
	mk(t, sess, "/s/b")
	set(t, sess, "/s/a", "x")
	r2.expect(t, i, "Added /s/b", "Updated /s/a")
}

// A recursive watch removed under a running cache (from ZooKeeper 3.9, one
// cache's Close removes the Session's other recursive watches on the path
// too): the cache sets it again and reads the tree again, so a change
// made meanwhile is reported once, and the next ones too.
func TestRemovedWatchIsSetAgain(t *testing.T) {
	sess := connect(t)
	mk(t, sess, "/t", "/t/a")
	c := started(t)(NewTree(sess, "/t"))
	r := record(t, c)
	i := r.expect(t, 0, "Added /t", "Added /t/a", "Initialized")
	c.watchMu.Lock()
	w := c.watch
	c.watchMu.Unlock()
	if err := w.Remove(testkit.Ctx(t, wait)); err != nil {
		t.Fatal(err)
	}
	mk(t, sess, "/t/b")
	i = r.expect(t, i, "Added /t/b")
	set(t, sess, "/t/a", "x")
	mk(t, sess, "/t/b/c")
	r.expect(t, i, "Updated /t/a", "Added /t/b/c")
	if paths, _, err := watchedBy(t, sess); err != nil || len(paths) != 1 {
		t.Errorf("watches of the cache's session: %q (%v), want the root's alone", paths, err)
	}
}

// A node created and deleted before the cache reads it is never
// reported; created again, it is.
func TestNodeGoneBeforeItsReadIsNotReported(t *testing.T) {
	writer := connect(t)
	mk(t, writer, "/q")
	hs := holdReads(t)
	sess := connect(t)
	c := started(t)(NewChildren(sess, "/q"))
	r := record(t, c)
	i := r.expect(t, 0, "Initialized")

	read := hs.at(t, "/q/a")
	mk(t, writer, "/q/a=1")
	read.wait(t)
	del(t, writer, "/q/a")
	read.release()
	mk(t, writer, "/q/a=2")
	i = r.expect(t, i, "Added /q/a")
	if got := data(c, "/q/a"); got != "2" {
		t.Errorf("Get /q/a = %q, want 2", got)
	}
	set(t, writer, "/q/a", "3")
	r.expect(t, i, "Updated /q/a")
}

// A node whose subtree grows before the cache reads it: the cache lists
// it and loads the subtree, and the creations reported afterwards find
// the nodes cached already, so each is reported once.
func TestSubtreeCreatedBeforeItsRootIsRead(t *testing.T) {
	writer := connect(t)
	mk(t, writer, "/t")
	hs := holdReads(t)
	sess := connect(t)
	c := started(t)(NewTree(sess, "/t"))
	r := record(t, c)
	i := r.expect(t, 0, "Added /t", "Initialized")

	read := hs.at(t, "/t/a")
	mk(t, writer, "/t/a")
	read.wait(t)
	mk(t, writer, "/t/a/x", "/t/a/x/y=1")
	read.release()
	i = r.expect(t, i, "Added /t/a", "Added /t/a/x", "Added /t/a/x/y")
	set(t, writer, "/t/a/x/y", "2")
	r.expect(t, i, "Updated /t/a/x/y")
}

// A subtree deleted and created again between two reads, its events
// handled together: Removed, deepest first, then Added, parents first,
// each once, and the new nodes followed.
func TestSubtreeReplacedBetweenReads(t *testing.T) {
	writer := connect(t)
	mk(t, writer, "/t", "/t/o", "/t/a=old", "/t/a/x=old")
	hs := holdReads(t)
	var mu sync.Mutex
	var queued []string
	followHook = func(ev zkcoord.Event) {
		mu.Lock()
		queued = append(queued, fmt.Sprintf("%v %s", ev.Type, ev.Path))
		mu.Unlock()
	}
	t.Cleanup(func() { followHook = nil })
	sess := connect(t)
	c := started(t)(NewTree(sess, "/t"))
	r := record(t, c)
	i := r.expect(t, 0, "Added /t", "Added /t/a", "Added /t/o", "Added /t/a/x", "Initialized")

	read := hs.at(t, "/t/o")
	set(t, writer, "/t/o", "1")
	read.wait(t)
	mu.Lock()
	queued = nil
	mu.Unlock()
	if _, err := writer.Multi(testkit.Ctx(t, wait),
		zkcoord.DeleteOp("/t/a/x", -1), zkcoord.DeleteOp("/t/a", -1),
		zkcoord.CreateOp("/t/a", []byte("new"), 0), zkcoord.CreateOp("/t/a/x", []byte("new"), 0),
	); err != nil {
		t.Fatal(err)
	}
	// The four events wait for the owner, which is held in its read.
	testkit.Eventually(t, wait, "the replacement's events queued", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(queued) == 4
	})
	read.release()
	i = r.expect(t, i, "Updated /t/o", "Removed /t/a/x", "Removed /t/a", "Added /t/a", "Added /t/a/x")
	if got := data(c, "/t/a/x"); got != "new" {
		t.Errorf("Get /t/a/x = %q, want new", got)
	}
	set(t, writer, "/t/a/x", "newer")
	r.expect(t, i, "Updated /t/a/x")
}

// On a server without persistent watches, a tree cache follows the tree
// on one-shot watches, and the next caches of the same Session do not ask
// for a persistent watch again (such a server closes the connection on a
// request it does not know).
func TestServerWithoutPersistentWatches(t *testing.T) {
	asked := withoutPersistentWatches(t)
	sess := connect(t)
	mk(t, sess, "/t", "/t/a")
	one := started(t)(NewTree(sess, "/t"))
	r1 := record(t, one)
	i := r1.expect(t, 0, "Added /t", "Added /t/a", "Initialized")
	two := started(t)(NewChildren(sess, "/t"))
	r2 := record(t, two)
	r2.expect(t, 0, "Added /t/a", "Initialized")
	if n := asked.Load(); n != 1 {
		t.Errorf("asked for a persistent watch %d times, want once", n)
	}
	paths, _, err := watchedBy(t, sess)
	slices.Sort(paths)
	if want := []string{testkit.Chroot(t) + "/t", testkit.Chroot(t) + "/t/a"}; err != nil || !slices.Equal(paths, want) {
		t.Errorf("data watches of the session: %q (%v), want one per node, %q", paths, err, want)
	}
	mk(t, sess, "/t/b")
	r1.expect(t, i, "Added /t/b")
}
