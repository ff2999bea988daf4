package counter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// watchConfig watches the counter at path with WatchConfig on Sessions to
// servers whose ids and passwords sessions records.
func watchConfig(t *testing.T, ctx context.Context, servers []string, sessions *zktest.SessionRecorder, path string) (*Watcher, *testkit.Recoveries) {
	t.Helper()
	cfg := testkit.Config(t, servers, func(c *zkcoord.Config) {
		c.Dialer = sessions.Dial
		c.SessionTimeout = 6 * time.Second
	})
	log := &testkit.Recoveries{}
	w, err := WatchConfig[int32](ctx, cfg, path, WithRecoveryEvents(log.C()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w, log
}

// next returns the next count w delivers.
func next(t *testing.T, ctx context.Context, w *Watcher) Count {
	t.Helper()
	select {
	case c, ok := <-w.Changes():
		if !ok {
			t.Fatalf("watch ended: %v", w.Err())
		}
		return c
	case <-ctx.Done():
		t.Fatal("no count delivered")
	}
	return Count{}
}

func setCount(t *testing.T, ctx context.Context, c *Counter, v int32) {
	t.Helper()
	if _, err := c.SetCount(ctx, v); err != nil {
		t.Fatal(err)
	}
}

// Across a server-side expiry the watch goes on on a new Session and does
// not deliver the unchanged count again: the next count it delivers is the
// next one written.
func TestWatchConfigAcrossExpiry(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	c, _ := New(connect(t), "/visits")
	setCount(t, ctx, c, 5)
	sessions := zktest.NewSessionRecorder(nil)
	w, log := watchConfig(t, ctx, servers, sessions, "/visits")
	if got := next(t, ctx, w); got.Value != 5 {
		t.Fatalf("first count %+v, want 5", got)
	}
	id, passwd := sessions.Session()
	if err := cluster.ExpireSession(ctx, id, passwd); err != nil {
		t.Fatal(err)
	}
	ended, at := log.Await(t, 30*time.Second, 0, zkcoord.SessionEnded)
	if !errors.Is(ended.Err, zkcoord.ErrSessionExpired) {
		t.Fatalf("ended %+v, want expired", ended)
	}
	log.Await(t, 30*time.Second, at, zkcoord.Recovered)
	setCount(t, ctx, c, 6)
	if got := next(t, ctx, w); got.Value != 6 {
		t.Fatalf("after recovery %+v, want 6 (5 was delivered already)", got)
	}
}

// Counts written while a partition keeps the watch without a Session are
// not delivered one by one: the newest is, once a new Session is open.
func TestWatchConfigAcrossPartition(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	c, _ := New(connect(t), "/visits")
	setCount(t, ctx, c, 5)
	proxy := cluster.NewProxy(t)
	w, log := watchConfig(t, ctx, proxy.Servers(), zktest.NewSessionRecorder(nil), "/visits")
	if got := next(t, ctx, w); got.Value != 5 {
		t.Fatalf("first count %+v, want 5", got)
	}
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	_, at := log.Await(t, 30*time.Second, 0, zkcoord.SessionEnded)
	setCount(t, ctx, c, 7)
	setCount(t, ctx, c, 9)
	log.Await(t, 30*time.Second, at, zkcoord.Recovering) // the proxy refuses
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	if got := next(t, ctx, w); got.Value != 9 {
		t.Fatalf("after the partition %+v, want the newest, 9", got)
	}
	setCount(t, ctx, c, 11)
	if got := next(t, ctx, w); got.Value != 11 {
		t.Fatalf("then %+v, want 11", got)
	}
}

// A Counter lives on one Session: recovery events need WatchConfig.
func TestNewRejectsRecoveryEvents(t *testing.T) {
	if _, err := New(connect(t), "/x", WithRecoveryEvents(make(chan zkcoord.RecoveryEvent))); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("New with recovery events = %v, want ErrInvalidConfig", err)
	}
}
