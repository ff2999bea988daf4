package recipe

import (
	"os"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

var cluster *zktest.Cluster

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster = c }))
}

// awaitEvent returns the event w delivers, failing the test if none comes
// in time.
func awaitEvent(t *testing.T, w <-chan zkcoord.Event, what string) zkcoord.Event {
	t.Helper()
	select {
	case ev := <-w:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatalf("no event: %s", what)
		return zkcoord.Event{}
	}
}

// A missing node gives no children and a watch that fires when it is
// created.
func TestWatchChildrenOfAMissingNode(t *testing.T) {
	sess := testkit.Connect(t, cluster.Servers())
	ctx := testkit.Ctx(t, time.Minute)
	kids, ok, w, err := WatchChildren(ctx, sess, "/dir")
	if err != nil || ok || kids != nil {
		t.Fatalf("WatchChildren of a missing node = %v, %v, %v", kids, ok, err)
	}
	if _, err := sess.Create(ctx, "/dir", nil, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	if ev := awaitEvent(t, w, "the node's creation"); ev.Type != zkcoord.EventNodeCreated {
		t.Fatalf("event %v, want the node's creation", ev)
	}
	if _, err := sess.Create(ctx, "/dir/a", nil, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	kids, ok, w, err = WatchChildren(ctx, sess, "/dir")
	if err != nil || !ok || len(kids) != 1 || kids[0] != "a" {
		t.Fatalf("WatchChildren = %v, %v, %v; want [a]", kids, ok, err)
	}
	if _, err := sess.Create(ctx, "/dir/b", nil, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	if ev := awaitEvent(t, w, "a new child"); ev.Type != zkcoord.EventNodeChildrenChanged {
		t.Fatalf("event %v, want a change of the children", ev)
	}
}

// A node created between the listing that missed it and the existence
// check is listed again, so that the watch returned fires for its
// children: an existence watch on a node that exists would fire only
// when its data changed or it went away.
func TestWatchChildrenOfANodeCreatedBetweenReads(t *testing.T) {
	sess := testkit.Connect(t, cluster.Servers())
	ctx := testkit.Ctx(t, time.Minute)
	created := 0
	betweenReads = func() {
		if created++; created == 1 {
			if _, err := sess.Create(ctx, "/dir", nil, zkcoord.FlagPersistent); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { betweenReads = nil })
	kids, ok, w, err := WatchChildren(ctx, sess, "/dir")
	if err != nil || !ok || len(kids) != 0 {
		t.Fatalf("WatchChildren = %v, %v, %v; want an existing node without children", kids, ok, err)
	}
	if _, err := sess.Create(ctx, "/dir/a", nil, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	if ev := awaitEvent(t, w, "a new child of a node created between the reads"); ev.Type != zkcoord.EventNodeChildrenChanged {
		t.Fatalf("event %v, want a change of the children", ev)
	}
}
