package zkcoord_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A Watcher delivers what its read function calls new, keeps the newest
// value for a slow reader, and ends with the Session.
func TestWatcher(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	ctx := testCtx(t, 30*time.Second)
	if _, err := s.Create(ctx, "/v", []byte("0"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	w := zkcoord.NewWatcher(ctx, s, func(ctx context.Context) (string, bool, <-chan zkcoord.Event, error) {
		data, _, fire, err := s.GetW(ctx, "/v")
		if err != nil {
			return "", false, nil, err
		}
		return string(data), string(data) != "skip", fire, nil
	})
	next := func() string {
		t.Helper()
		select {
		case v, ok := <-w.Changes():
			if !ok {
				t.Fatalf("channel closed: %v", w.Err())
			}
			return v
		case <-ctx.Done():
			t.Fatal("no value")
		}
		return ""
	}
	if v := next(); v != "0" {
		t.Fatalf("first value %q, want 0", v)
	}
	// Values written while nobody reads are collapsed into the newest.
	for _, v := range []string{"1", "skip", "2", "3"} {
		if _, err := s.Set(ctx, "/v", []byte(v), -1); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for v := next(); v != "3"; v = next() {
		if v == "skip" {
			t.Fatal("a value the read function refused was delivered")
		}
		if time.Now().After(deadline) {
			t.Fatalf("last value %q, never 3", v)
		}
	}
	w.Stop()
	if _, ok := <-w.Changes(); ok {
		t.Fatal("channel open after Stop")
	}
	if err := w.Err(); err != nil {
		t.Fatalf("Err after Stop = %v, want nil", err)
	}

	other := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	w2 := zkcoord.NewWatcher(ctx, other, func(ctx context.Context) (int, bool, <-chan zkcoord.Event, error) {
		_, _, fire, err := other.GetW(ctx, "/v")
		return 0, false, fire, err
	})
	if err := other.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w2.Changes(); ok {
		t.Fatal("a value that was never new was delivered")
	}
	if err := w2.Err(); !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Fatalf("Err after the Session closed = %v, want ErrSessionClosed", err)
	}
}
