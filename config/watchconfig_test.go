package config

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// configFor returns a Config for the test's chroot on servers, recording
// session ids and passwords in sessions.
func configFor(t *testing.T, servers []string, sessions *zktest.SessionRecorder) zkcoord.Config {
	return testkit.Config(t, servers, func(c *zkcoord.Config) {
		c.Dialer = sessions.Dial
		c.SessionTimeout = 6 * time.Second
	})
}

// nextOf returns the next value w delivers.
func nextOf[V any](t *testing.T, ctx context.Context, w *Watcher[V]) V {
	t.Helper()
	select {
	case v, ok := <-w.Changes():
		if !ok {
			t.Fatalf("watch ended: %v", w.Err())
		}
		return v
	case <-ctx.Done():
		t.Fatal("nothing delivered")
	}
	var zero V
	return zero
}

// A node deleted and created again while a partition keeps the watch
// without a Session: once a new Session is open, the watch delivers the
// newest version only.
func TestWatchConfigAcrossPartition(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	n, _ := New(connect(t), "/app/conf")
	if _, err := n.Create(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	proxy := cluster.NewProxy(t)
	log := &testkit.Recoveries{}
	w, err := WatchConfig(ctx, configFor(t, proxy.Servers(), zktest.NewSessionRecorder(nil)), "/app/conf", WithRecoveryEvents(log.C()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if v := nextOf(t, ctx, w); string(v.Data) != "a" {
		t.Fatalf("first version %q, want a", v.Data)
	}
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	_, at := log.Await(t, 30*time.Second, 0, zkcoord.SessionEnded)
	if err := n.Delete(ctx, AnyVersion); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Create(ctx, []byte("b")); err != nil {
		t.Fatal(err)
	}
	log.Await(t, 30*time.Second, at, zkcoord.Recovering)
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	if v := nextOf(t, ctx, w); string(v.Data) != "b" || !v.Exists {
		t.Fatalf("after the partition %+v, want b", v)
	}
	if err := n.Delete(ctx, AnyVersion); err != nil {
		t.Fatal(err)
	}
	if v := nextOf(t, ctx, w); v.Exists {
		t.Fatalf("after a deletion %+v, want Exists false", v)
	}
}

// Across a server-side expiry a JSON watch goes on on a new Session and
// delivers the next value written, not the unchanged one again.
func TestWatchJSONConfigAcrossExpiry(t *testing.T) {
	type limits struct{ Max int }
	ctx := testkit.Ctx(t, 2*time.Minute)
	j, _ := NewJSON[limits](connect(t), "/app/limits")
	if _, err := j.Create(ctx, limits{Max: 1}); err != nil {
		t.Fatal(err)
	}
	sessions := zktest.NewSessionRecorder(nil)
	log := &testkit.Recoveries{}
	w, err := WatchJSONConfig[limits](ctx, configFor(t, servers, sessions), "/app/limits", WithRecoveryEvents(log.C()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if v := nextOf(t, ctx, w); v.Value.Max != 1 || v.Err != nil {
		t.Fatalf("first value %+v, want Max 1", v)
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
	if _, err := j.Update(ctx, func(cur Value[limits]) (limits, error) { return limits{Max: 2}, nil }); err != nil {
		t.Fatal(err)
	}
	if v := nextOf(t, ctx, w); v.Value.Max != 2 {
		t.Fatalf("after recovery %+v, want Max 2 (Max 1 was delivered already)", v)
	}
}

func TestWatchConfigBadPath(t *testing.T) {
	if _, err := WatchConfig(context.Background(), zkcoord.Config{}, "rel"); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("WatchConfig(rel) = %v, want ErrInvalidPath", err)
	}
}

// A Node runs on one Session: recovery events need WatchConfig.
func TestNewRejectsRecoveryEvents(t *testing.T) {
	events := WithRecoveryEvents(make(chan zkcoord.RecoveryEvent))
	if _, err := New(connect(t), "/a", events); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Errorf("New with recovery events = %v, want ErrInvalidConfig", err)
	}
	if _, err := NewJSON[int](connect(t), "/a", events); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Errorf("NewJSON with recovery events = %v, want ErrInvalidConfig", err)
	}
}
