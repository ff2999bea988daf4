package zkcoord_test

import (
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// DataW reads a node that exists like GetW, and watches for the creation
// of one that does not.
func TestDataWWatchesCreationThenChange(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	ctx := testCtx(t, 30*time.Second)
	path := "/dataw/" + t.Name()
	if err := s.EnsurePath(ctx, zkcoord.Parent(path)); err != nil {
		t.Fatal(err)
	}
	data, st, w, err := s.DataW(ctx, path)
	if err != nil || st != nil || data != nil {
		t.Fatalf("missing node: data %q, stat %v, %v", data, st, err)
	}
	if _, err := s.Create(ctx, path, []byte("one"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	if ev := <-w; ev.Type != zkcoord.EventNodeCreated {
		t.Fatalf("watch on a missing node fired with %v, want its creation", ev.Type)
	}
	data, st, w, err = s.DataW(ctx, path)
	if err != nil || st == nil || string(data) != "one" {
		t.Fatalf("existing node: data %q, stat %v, %v", data, st, err)
	}
	if _, err := s.Set(ctx, path, []byte("two"), -1); err != nil {
		t.Fatal(err)
	}
	if ev := <-w; ev.Type != zkcoord.EventNodeDataChanged {
		t.Fatalf("watch on a node fired with %v, want its change", ev.Type)
	}
}
