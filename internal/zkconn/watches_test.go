package zkconn

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/zktest"
)

func TestWatchesRegisteredAsTheReplySays(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 10*time.Second)
	other := dial(t, cluster.Servers(), 10*time.Second)
	ctx := testCtx(t, 30*time.Second)

	// exists on a missing node leaves a watch that fires on its creation.
	_, _, ew, err := c.Exists(ctx, "/later", true)
	if !errors.Is(err, wire.ErrNoNode) || ew == nil {
		t.Fatalf("exists on a missing node: watch %v, err %v; want a watch and NoNode", ew, err)
	}
	// getData on a missing node leaves none.
	if _, _, dw, err := c.GetData(ctx, "/later", true); !errors.Is(err, wire.ErrNoNode) || dw != nil {
		t.Fatalf("getData on a missing node: watch %v, err %v; want no watch and NoNode", dw, err)
	}
	if _, _, err := other.Create(ctx, "/later", []byte("v"), openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if e := nextNode(t, ew); e.Type != wire.EventNodeCreated || e.Path != "/later" {
		t.Fatalf("exists watch got %+v, want NodeCreated /later", e)
	}
	// getData and getChildren on an existing node leave theirs.
	_, _, dw, err := c.GetData(ctx, "/later", true)
	if err != nil || dw == nil {
		t.Fatalf("getData: watch %v, err %v", dw, err)
	}
	_, _, cw, err := c.GetChildren(ctx, "/later", true)
	if err != nil || cw == nil {
		t.Fatalf("getChildren: watch %v, err %v", cw, err)
	}
	if _, _, err := other.Create(ctx, "/later/kid", nil, openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	if e := nextNode(t, cw); e.Type != wire.EventNodeChildrenChanged || e.Path != "/later" {
		t.Fatalf("child watch got %+v", e)
	}
	if _, _, err := other.SetData(ctx, "/later", []byte("w"), -1); err != nil {
		t.Fatal(err)
	}
	if e := nextNode(t, dw); e.Type != wire.EventNodeDataChanged || e.Path != "/later" {
		t.Fatalf("data watch got %+v", e)
	}
	// One-shot: a second change reaches no watch; each got one event.
	if _, _, err := other.SetData(ctx, "/later", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.Exists(ctx, "/later", false); err != nil { // a round trip after the change
		t.Fatal(err)
	}
	for _, w := range []*Watch{ew, dw, cw} {
		if e, ok := w.TryNext(); ok {
			t.Errorf("one-shot watch on %s got a second event %+v", w.Path(), e)
		}
	}
}

func TestWatchEventComesBeforeLaterReply(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 10*time.Second)
	other := dial(t, cluster.Servers(), 10*time.Second)
	ctx := testCtx(t, 60*time.Second)
	if _, _, err := other.Create(ctx, "/ordered", nil, openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		_, _, w, err := c.GetData(ctx, "/ordered", true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := other.SetData(ctx, "/ordered", []byte{byte(i)}, -1); err != nil {
			t.Fatal(err)
		}
		// The write committed before this read was issued, so the
		// server sent the event before the read's reply: it must be
		// queued on the watch by the time the read returns.
		if _, _, _, err := c.GetData(ctx, "/ordered", false); err != nil {
			t.Fatal(err)
		}
		e, ok := w.TryNext()
		if !ok || e.Type != wire.EventNodeDataChanged {
			t.Fatalf("round %d: after the later read's reply the watch holds %+v (%v); want the NodeDataChanged event", i, e, ok)
		}
	}
}

func TestPersistentRecursiveWatch(t *testing.T) {
	cluster := zktest.Start(t)
	c := dial(t, cluster.Servers(), 10*time.Second)
	other := dial(t, cluster.Servers(), 10*time.Second)
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := other.Create(ctx, "/tree", nil, openACL, wire.ModePersistent); err != nil {
		t.Fatal(err)
	}
	_, w, err := c.AddWatch(ctx, "/tree", wire.AddWatchPersistentRecursive)
	if err != nil || w == nil {
		t.Fatalf("addWatch: %v %v", w, err)
	}
	steps := []struct {
		do   func() error
		want Event
	}{
		{func() error { _, _, err := other.Create(ctx, "/tree/a", nil, openACL, wire.ModePersistent); return err },
			Event{Type: wire.EventNodeCreated, Path: "/tree/a"}},
		{func() error {
			_, _, err := other.Create(ctx, "/tree/a/b", nil, openACL, wire.ModePersistent)
			return err
		},
			Event{Type: wire.EventNodeCreated, Path: "/tree/a/b"}},
		{func() error { _, _, err := other.SetData(ctx, "/tree/a", []byte("1"), -1); return err },
			Event{Type: wire.EventNodeDataChanged, Path: "/tree/a"}},
		{func() error { _, err := other.Delete(ctx, "/tree/a/b", -1); return err },
			Event{Type: wire.EventNodeDeleted, Path: "/tree/a/b"}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range steps {
		if e := nextNode(t, w); e.Type != s.want.Type || e.Path != s.want.Path {
			t.Fatalf("event %d: %+v, want %v %s", i, e, s.want.Type, s.want.Path)
		}
	}
	// Removing it ends it with PersistentWatchRemoved before the reply.
	if _, err := c.RemoveWatches(ctx, "/tree", wire.WatcherAny); err != nil {
		t.Fatal(err)
	}
	if e, ok := w.TryNext(); !ok || e.Type != wire.EventPersistentWatchRemoved {
		t.Fatalf("after removeWatches: %+v %v; want PersistentWatchRemoved", e, ok)
	}
	if _, err := c.CheckWatches(ctx, "/tree", wire.WatcherAny); !errors.Is(err, wire.ErrNoWatcher) {
		t.Fatalf("checkWatches after removal: %v; want NoWatcher", err)
	}
}
