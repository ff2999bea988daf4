package zkcoord_test

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

// A recursive persistent watch reports every change below its node, in
// order, stays set across a reconnection (saying so), and ends when it is
// removed or its Session ends.
func TestPersistentWatch(t *testing.T) {
	c := zktest.Start(t)
	p := c.NewProxy(t)
	s := connect(t, zkcoord.Config{Servers: p.Servers(), Chroot: "/app"})
	writer := connect(t, zkcoord.Config{Servers: c.Servers(), Chroot: "/app"})
	ctx := testCtx(t, 60*time.Second)
	w, err := s.AddWatch(ctx, "/tree", true)
	if err != nil {
		t.Fatal(err)
	}
	next := func() zkcoord.Event {
		t.Helper()
		e, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		return e
	}
	if _, err := writer.Create(ctx, "/tree", nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Create(ctx, "/tree/a", nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Set(ctx, "/tree/a", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if err := writer.Delete(ctx, "/tree/a", -1); err != nil {
		t.Fatal(err)
	}
	want := []zkcoord.Event{
		{Type: zkcoord.EventNodeCreated, Path: "/tree"},
		{Type: zkcoord.EventNodeCreated, Path: "/tree/a"},
		{Type: zkcoord.EventNodeDataChanged, Path: "/tree/a"},
		{Type: zkcoord.EventNodeDeleted, Path: "/tree/a"},
	}
	var got []zkcoord.Event
	for range want {
		got = append(got, next())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events %+v, want %+v", got, want)
	}

	// Cut the connection: the watch is set again on the same session and
	// says so before the next change.
	states := s.Watch(ctx)
	if err := p.ResetPeer(); err != nil {
		t.Fatal(err)
	}
	for st := range states {
		if st.State == zkcoord.Suspended {
			break
		}
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if e := next(); e.Type != zkcoord.EventRearmed {
		t.Fatalf("after a reconnection: %+v, want EventRearmed", e)
	}
	// The reader reads again what matters, as EventRearmed asks; a change
	// after that read is reported.
	if _, _, err := s.Children(ctx, "/tree"); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Create(ctx, "/tree/b", nil, 0); err != nil {
		t.Fatal(err)
	}
	if e := next(); e.Type != zkcoord.EventNodeCreated || e.Path != "/tree/b" {
		t.Fatalf("after the reconnection: %+v, want /tree/b created", e)
	}

	if err := w.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if e := next(); e.Type != zkcoord.EventNotWatching || !errors.Is(e.Err, zkcoord.ErrWatchRemoved) {
		t.Fatalf("after Remove: %+v, want EventNotWatching with ErrWatchRemoved", e)
	}

	// A second watch ends with its Session.
	w2, err := s.AddWatch(ctx, "/tree", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if e, err := w2.Next(ctx); err != nil || e.Type != zkcoord.EventNotWatching || !errors.Is(e.Err, zkcoord.ErrSessionClosed) {
		t.Fatalf("after Close: %+v, %v; want EventNotWatching with ErrSessionClosed", e, err)
	}
}

// WhoAmI, Ephemerals and CountDescendants answer from the server, the
// chroot applied.
func TestServerInfo(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t),
		Auth: []zkcoord.Auth{{Scheme: "digest", Credential: "alice:pw"}}})
	ctx := testCtx(t, 30*time.Second)
	ids, err := s.WhoAmI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, zkcoord.Identity{Scheme: "digest", User: "alice"}) {
		t.Fatalf("WhoAmI = %+v, want digest alice among them", ids)
	}
	if err := s.EnsurePath(ctx, "/a/b"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a/e1", "/a/b/e2", "/e3"} {
		if _, err := s.Create(ctx, p, nil, zkcoord.FlagEphemeral); err != nil {
			t.Fatal(err)
		}
	}
	eph, err := s.Ephemerals(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(eph)
	if want := []string{"/a/b/e2", "/a/e1"}; !slices.Equal(eph, want) {
		t.Fatalf("Ephemerals(/a) = %v, want %v", eph, want)
	}
	if all, err := s.Ephemerals(ctx, "/"); err != nil || len(all) != 3 {
		t.Fatalf("Ephemerals(/) = %v, %v; want the three", all, err)
	}
	if n, err := s.CountDescendants(ctx, "/a"); err != nil || n != 3 {
		t.Fatalf("CountDescendants(/a) = %d, %v; want 3 (b, e1, b/e2)", n, err)
	}
	if _, err := s.Ephemerals(context.Background(), "a"); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("Ephemerals(a) = %v, want ErrInvalidPath", err)
	}
}
