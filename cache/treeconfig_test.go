package cache

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// treeConfig starts a NewTreeConfig cache of root on Sessions to servers
// whose ids and passwords sessions records, and records its events and
// recovery events.
func treeConfig(t *testing.T, servers []string, sessions *zktest.SessionRecorder, root string) (*recorder, *testkit.Recoveries) {
	t.Helper()
	cfg := testkit.Config(t, servers, func(c *zkcoord.Config) {
		c.Dialer = sessions.Dial
		c.SessionTimeout = 6 * time.Second
	})
	log := &testkit.Recoveries{}
	c, err := NewTreeConfig(testkit.Ctx(t, wait), cfg, root, WithRecoveryEvents(log.C()))
	if err != nil {
		t.Fatal(err)
	}
	return record(t, c), log
}

// A partition ends the cache's Session; what changed meanwhile (a node
// updated, one deleted, one created, one deleted and created again) is
// reported once a new Session is open: the new Session's state, exactly
// those differences, then Resynced. Nothing stale stays cached, and the
// watches are set again on the new Session.
func TestTreeConfigResyncsAfterPartition(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		op := connect(t)
		mk(t, op, "/a=1", "/a/x=1", "/a/y=1", "/a/w=1")
		proxy := cluster.NewProxy(t)
		r, log := treeConfig(t, proxy.Servers(), zktest.NewSessionRecorder(nil), "/a")
		at := r.expect(t, 0, "Added /a", "Added /a/w", "Added /a/x", "Added /a/y", "Initialized")

		if err := proxy.Cut(); err != nil {
			t.Fatal(err)
		}
		at = r.until(t, at, "StateChanged Lost")
		set(t, op, "/a/x", "2")
		del(t, op, "/a/y", "/a/w")
		mk(t, op, "/a/z=1", "/a/w=2")
		_, seen := log.Await(t, wait, 0, zkcoord.SessionEnded)
		log.Await(t, wait, seen, zkcoord.Recovering) // the proxy refuses
		if err := proxy.Heal(); err != nil {
			t.Fatal(err)
		}
		at = r.expect(t, at, "StateChanged Connected")
		end := r.until(t, at, "Resynced")
		diffs := r.events()[at : end-1]
		slices.Sort(diffs)
		want := []string{"Added /a/w", "Added /a/z", "Removed /a/w", "Removed /a/y", "Updated /a/x"}
		if !slices.Equal(diffs, want) {
			t.Fatalf("differences %q, want %q", diffs, want)
		}
		if got := r.events()[at:end]; slices.Index(got, "Removed /a/w") > slices.Index(got, "Added /a/w") {
			t.Fatalf("differences %q: /a/w added before its removal", got)
		}
		if d := data(r.c, "/a/x") + data(r.c, "/a/w") + data(r.c, "/a/z") + data(r.c, "/a/y"); d != "221<none>" {
			t.Fatalf("cached x, w, z, y = %q", d)
		}
		set(t, op, "/a/z", "2")
		r.expect(t, end, "Updated /a/z")
	})
}

// After the server expires the cache's Session, the cache carries on on a
// new one: its events say so (the Expired state, the new Session's state,
// Resynced with no difference, nothing having changed), and changes made
// after that are reported, through watches set on the new Session.
func TestTreeConfigAfterExpiry(t *testing.T) {
	op := connect(t)
	mk(t, op, "/a=1", "/a/x=1")
	sessions := zktest.NewSessionRecorder(nil)
	r, log := treeConfig(t, servers, sessions, "/a")
	at := r.expect(t, 0, "Added /a", "Added /a/x", "Initialized")
	started, _ := log.Await(t, wait, 0, zkcoord.SessionStarted)
	id, passwd := sessions.Session()
	if started.Session != id {
		t.Fatalf("started on 0x%x, the server gave 0x%x", started.Session, id)
	}
	if err := cluster.ExpireSession(testkit.Ctx(t, wait), id, passwd); err != nil {
		t.Fatal(err)
	}
	at = r.until(t, at, "StateChanged Expired")
	at = r.expect(t, at, "StateChanged Connected", "Resynced")
	ended, seen := log.Await(t, wait, 0, zkcoord.SessionEnded)
	if ended.Session != id || !errors.Is(ended.Err, zkcoord.ErrSessionExpired) {
		t.Fatalf("ended %+v, want 0x%x expired", ended, id)
	}
	if recovered, _ := log.Await(t, wait, seen, zkcoord.Recovered); recovered.Session == id {
		t.Fatalf("recovered on the expired session 0x%x", id)
	}
	set(t, op, "/a/x", "2")
	mk(t, op, "/a/y")
	r.expect(t, at, "Updated /a/x", "Added /a/y")
}

// The session-bound forms run on one Session: recovery events need
// NewTreeConfig. NewNode and NewChildren have a depth of their own.
func TestSessionBoundFormsRejectOptions(t *testing.T) {
	sess := connect(t)
	events := WithRecoveryEvents(make(chan zkcoord.RecoveryEvent))
	for name, err := range map[string]error{
		"NewTree with recovery events":     second(NewTree(sess, "/a", events)),
		"NewNode with recovery events":     second(NewNode(sess, "/a", events)),
		"NewChildren with recovery events": second(NewChildren(sess, "/a", events)),
		"NewNode with a depth":             second(NewNode(sess, "/a", WithMaxDepth(2))),
		"NewChildren with a depth":         second(NewChildren(sess, "/a", WithMaxDepth(0))),
	} {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s = %v, want ErrInvalid", name, err)
		}
	}
}

func second(c *Cache, err error) error {
	if c != nil {
		c.Close(context.Background())
	}
	return err
}
