package recipe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// EnsureDeleted removes a node, treats a missing one as done and refuses a
// node with children.
func TestEnsureDeleted(t *testing.T) {
	s := testkit.Connect(t, cluster.Servers())
	ctx := testkit.Ctx(t, 30*time.Second)
	if err := s.EnsurePath(ctx, "/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDeleted(ctx, s, "/a"); !errors.Is(err, zkcoord.ErrNotEmpty) {
		t.Fatalf("EnsureDeleted of a parent = %v, want ErrNotEmpty", err)
	}
	for range 2 { // the second call finds nothing to delete
		if err := EnsureDeleted(ctx, s, "/a/b"); err != nil {
			t.Fatalf("EnsureDeleted: %v", err)
		}
	}
	if ok, _, err := s.Exists(ctx, "/a/b"); err != nil || ok {
		t.Fatalf("Exists after EnsureDeleted = %v, %v", ok, err)
	}
}

// watchedNode creates the node at path and returns a watch on it.
func watchedNode(t *testing.T, ctx context.Context, s *zkcoord.Session, path string) <-chan zkcoord.Event {
	t.Helper()
	if err := s.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	ok, _, w, err := s.ExistsW(ctx, path)
	if err != nil || !ok {
		t.Fatalf("ExistsW(%s) = %v, %v", path, ok, err)
	}
	return w
}

// EnsureDeletedLater deletes the node in the background without making the
// caller wait; another client sees it go.
func TestEnsureDeletedLater(t *testing.T) {
	s := testkit.Connect(t, cluster.Servers())
	ctx := testkit.Ctx(t, 30*time.Second)
	w := watchedNode(t, ctx, s, "/n")
	EnsureDeletedLater(s, "/n")
	EnsureDeletedLater(s, "/missing") // nothing to delete: no harm
	ev, err := WaitEvent(ctx, s, w)
	if err != nil || ev.Type != zkcoord.EventNodeDeleted {
		t.Fatalf("WaitEvent = %+v, %v; want the deletion of /n", ev, err)
	}
}

// WatchPredecessor looks again when the node it was to watch is gone,
// watches the one that is there, and passes on "nothing to wait for" and
// look's failure.
func TestWatchPredecessor(t *testing.T) {
	s := testkit.Connect(t, cluster.Servers())
	ctx := testkit.Ctx(t, 30*time.Second)
	if err := EnsureNode(ctx, s, "/there", []byte("id-1"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	names := []string{"/gone", "/there"}
	looks := 0
	pred, data, w, err := WatchPredecessor(ctx, s, func() (string, error) {
		looks++
		return names[looks-1], nil
	})
	if err != nil || pred != "/there" || string(data) != "id-1" || looks != 2 {
		t.Fatalf("WatchPredecessor = %q, %q, %v after %d looks; want /there, id-1 after 2", pred, data, err, looks)
	}
	if err := EnsureDeleted(ctx, s, "/there"); err != nil {
		t.Fatal(err)
	}
	if ev, err := WaitEvent(ctx, s, w); err != nil || ev.Type != zkcoord.EventNodeDeleted {
		t.Fatalf("watch = %+v, %v; want the deletion of /there", ev, err)
	}

	if pred, _, w, err := WatchPredecessor(ctx, s, func() (string, error) { return "", nil }); pred != "" || w != nil || err != nil {
		t.Fatalf("with nothing to wait for = %q, %v, %v; want nothing", pred, w, err)
	}
	boom := errors.New("boom")
	if _, _, _, err := WatchPredecessor(ctx, s, func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("with look failing = %v; want its error", err)
	}
}

// WaitEvent returns the watch's event, ctx's error or the Session's error.
func TestWaitEvent(t *testing.T) {
	s := testkit.Connect(t, cluster.Servers())
	ctx := testkit.Ctx(t, 30*time.Second)
	w := watchedNode(t, ctx, s, "/n")
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := WaitEvent(short, s, w); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitEvent with nothing happening = %v, want DeadlineExceeded", err)
	}
	if err := EnsureDeleted(ctx, s, "/n"); err != nil {
		t.Fatal(err)
	}
	ev, err := WaitEvent(ctx, s, w)
	if err != nil || ev.Type != zkcoord.EventNodeDeleted || ev.Path != "/n" {
		t.Fatalf("WaitEvent = %+v, %v; want the deletion of /n", ev, err)
	}

	other := testkit.Connect(t, cluster.Servers())
	_, _, w, err = other.ExistsW(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitEvent(ctx, other, w); !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Fatalf("WaitEvent on a closed Session = %v, want ErrSessionClosed", err)
	}
}

// EnsureNode creates a node with its parents, leaves an existing one as it
// is and refuses a sequential create.
func TestEnsureNode(t *testing.T) {
	s := testkit.Connect(t, cluster.Servers())
	ctx := testkit.Ctx(t, 30*time.Second)
	for _, data := range []string{"first", "second"} {
		if err := EnsureNode(ctx, s, "/a/b/c", []byte(data), zkcoord.FlagPersistent); err != nil {
			t.Fatalf("EnsureNode: %v", err)
		}
	}
	if data, _, err := s.Get(ctx, "/a/b/c"); err != nil || string(data) != "first" {
		t.Fatalf("node holds %q, %v; want the first data, untouched", data, err)
	}
	if err := EnsureNode(ctx, s, "/a/seq-", nil, zkcoord.FlagSequence); err == nil {
		t.Fatal("EnsureNode accepted a sequential create")
	}
}
