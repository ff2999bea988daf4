package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A partition shorter than the session timeout: while the cache's Session
// is cut off, another client updates, deletes, adds and re-creates nodes.
// Between Suspended and Resynced the cache reports exactly those
// differences, once each, and afterwards it still follows every node (its
// watches are in place again).
func TestResyncAfterPartitionReportsExactlyTheDifferences(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		writer := connect(t)
		mk(t, writer, "/t", "/t/same=s", "/t/upd=1", "/t/gone=g", "/t/gone/kid", "/t/again=old", "/t/deep", "/t/deep/leaf=1")
		proxy := cluster.NewProxy(t)
		sess := testkit.Connect(t, proxy.Servers())
		c := started(t)(NewTree(sess, "/t"))
		r := record(t, c)
		i := r.until(t, 0, "Initialized")

		if err := proxy.Cut(); err != nil {
			t.Fatal(err)
		}
		i = r.until(t, i, "StateChanged Suspended")
		set(t, writer, "/t/upd", "2")
		del(t, writer, "/t/gone/kid", "/t/gone", "/t/again")
		mk(t, writer, "/t/again=new", "/t/new=n", "/t/deep/leaf/x")
		set(t, writer, "/t/deep/leaf", "2")
		if err := proxy.Heal(); err != nil {
			t.Fatal(err)
		}
		end := r.until(t, i, "Resynced")

		var got []string
		for _, e := range r.events()[i:end] {
			if e != "StateChanged Reconnected" && e != "Resynced" {
				got = append(got, e)
			}
		}
		slices.Sort(got)
		want := []string{
			"Added /t/again", "Added /t/deep/leaf/x", "Added /t/new",
			"Removed /t/again", "Removed /t/gone", "Removed /t/gone/kid",
			"Updated /t/deep/leaf", "Updated /t/upd",
		}
		if !slices.Equal(got, want) {
			t.Errorf("events during the partition and resync:\n got %q\nwant %q", got, want)
		}
		if data(c, "/t/again") != "new" || data(c, "/t/upd") != "2" || data(c, "/t/same") != "s" {
			t.Errorf("after resync: again=%q upd=%q same=%q", data(c, "/t/again"), data(c, "/t/upd"), data(c, "/t/same"))
		}

		// Every node is followed again, and nothing more arrives late: the
		// next events are exactly those of the next changes.
		set(t, writer, "/t/same", "s2")
		set(t, writer, "/t/again", "newer")
		mk(t, writer, "/t/deep/leaf/x/y")
		r.expect(t, end, "Updated /t/same", "Updated /t/again", "Added /t/deep/leaf/x/y")
	})
}

// On one-shot watches, Close stops the cache for good: once the watches it
// had set fire, none is set again, so the server holds no watch for it.
func TestCloseLeavesNoWatches(t *testing.T) {
	withoutPersistentWatches(t)
	sess := connect(t)
	mk(t, sess, "/w", "/w/a", "/w/a/b", "/w/c")
	c := started(t)(NewTree(sess, "/w"))
	r := record(t, c)
	r.until(t, 0, "Initialized")
	srv := cluster.Server(0)
	ctx := testkit.Ctx(t, wait)
	mine := func() (int, error) {
		by, err := srv.Wchc(ctx)
		return len(by[sess.ID()]), err
	}
	if n, err := mine(); err != nil || n != 4 {
		t.Fatalf("data watches of the cache's session: %d (%v), want 4", n, err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-r.done
	// Fire every watch: children first, then the root, which a running
	// cache would watch for its creation again.
	del(t, sess, "/w/a/b", "/w/a", "/w/c", "/w")
	testkit.WaitFor(t, wait, "no watch left", func() error {
		n, err := mine()
		if err != nil {
			return err
		}
		total, err := srv.WatchCount(ctx)
		if err != nil {
			return err
		}
		if n != 0 || total != 0 {
			return fmt.Errorf("%w: %d data watches of the session, %d watches in all", testkit.ErrNotYet, n, total)
		}
		return nil
	})
	if n := r.len(); r.events()[n-1] != "Initialized" {
		t.Errorf("events after Close: %q", r.events())
	}
}

// An expired Session ends the cache: the last event is the state, the
// channel closes and Err says why.
func TestSessionExpiryEndsTheCache(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		sess := connect(t)
		mk(t, sess, "/e", "/e/a")
		c := started(t)(NewChildren(sess, "/e"))
		r := record(t, c)
		i := r.expect(t, 0, "Added /e/a", "Initialized")
		if err := cluster.ExpireSession(testkit.Ctx(t, wait), sess.ID(), sess.Password()); err != nil {
			t.Fatal(err)
		}
		<-r.done
		if got := r.events()[i:]; len(got) == 0 || got[len(got)-1] != "StateChanged Expired" {
			t.Errorf("last events %q, want StateChanged Expired last", got)
		}
		<-c.Done()
		if !errors.Is(c.Err(), zkcoord.ErrSessionExpired) {
			t.Errorf("Err = %v, want ErrSessionExpired", c.Err())
		}
	})
}

// The Session's states reach the reader at once, even while the cache
// waits for a read that a disconnection interrupted: Suspended arrives
// while the Session is still Suspended, long before it would be Lost.
func TestStatesArriveWhileAReadWaits(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		writer := connect(t)
		mk(t, writer, "/t", "/t/a")
		proxy := cluster.NewProxy(t)
		sess := testkit.Connect(t, proxy.Servers())
		reading, cut := make(chan struct{}), make(chan struct{})
		var once sync.Once
		readHook = func(path string) {
			if path == "/t/a" && loaded.Load() {
				once.Do(func() { close(reading); <-cut })
			}
		}
		t.Cleanup(func() { readHook = nil })
		c := started(t)(NewTree(sess, "/t"))
		r := record(t, c)
		i := r.until(t, 0, "Initialized")
		loaded.Store(true)
		t.Cleanup(func() { loaded.Store(false) })

		set(t, writer, "/t/a", "x")
		<-reading // the cache is about to read /t/a
		if err := proxy.Cut(); err != nil {
			t.Fatal(err)
		}
		close(cut)
		i = r.until(t, i, "StateChanged Suspended")
		if st := sess.State(); st != zkcoord.Suspended {
			t.Fatalf("Suspended reported only when the Session was %v", st)
		}
		if err := proxy.Heal(); err != nil {
			t.Fatal(err)
		}
		r.until(t, i, "Updated /t/a")
	})
}

// loaded tells the read hook that the initial load is over.
var loaded atomic.Bool

// The root deleted and created again while the cache is cut off: the
// resync reports the old subtree removed and the new one added, within the
// depth limit.
func TestResyncOfARootCreatedAgain(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		writer := connect(t)
		mk(t, writer, "/r=old", "/r/x", "/r/x/deep")
		proxy := cluster.NewProxy(t)
		sess := testkit.Connect(t, proxy.Servers())
		c := started(t)(NewTree(sess, "/r", WithMaxDepth(1)))
		r := record(t, c)
		i := r.expect(t, 0, "Added /r", "Added /r/x", "Initialized")

		if err := proxy.Cut(); err != nil {
			t.Fatal(err)
		}
		i = r.until(t, i, "StateChanged Suspended")
		del(t, writer, "/r/x/deep", "/r/x", "/r")
		mk(t, writer, "/r=new", "/r/y", "/r/y/deep")
		if err := proxy.Heal(); err != nil {
			t.Fatal(err)
		}
		end := r.until(t, i, "Resynced")
		var got []string
		for _, e := range r.events()[i:end] {
			if e != "StateChanged Reconnected" && e != "Resynced" {
				got = append(got, e)
			}
		}
		want := []string{"Removed /r/x", "Removed /r", "Added /r", "Added /r/y"}
		if !slices.Equal(got, want) {
			t.Errorf("events:\n got %q\nwant %q", got, want)
		}
		if data(c, "/r") != "new" || c.Len() != 2 {
			t.Errorf("after resync: /r=%q, %d nodes", data(c, "/r"), c.Len())
		}
		set(t, writer, "/r/y", "z")
		r.expect(t, end, "Updated /r/y")
	})
}
