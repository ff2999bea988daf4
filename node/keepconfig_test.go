package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// keepConfig keeps path with KeepConfig on Sessions to servers whose ids
// and passwords sessions records, in the test's chroot; recovery events
// land in the returned log.
func keepConfig(t *testing.T, ctx context.Context, servers []string, sessions *zktest.SessionRecorder, path, data string, opts ...Option) (*Kept, *testkit.Recoveries) {
	t.Helper()
	cfg := testkit.Config(t, servers, func(c *zkcoord.Config) {
		c.Dialer = sessions.Dial
		c.SessionTimeout = 6 * time.Second
	})
	log := &testkit.Recoveries{}
	k, err := KeepConfig(ctx, cfg, path, []byte(data), append(opts, WithRecoveryEvents(log.C()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Close(testkit.Ctx(t, 30*time.Second)); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return k, log
}

// nodeIs waits until the node at path holds data and is owned by session
// (0: a TTL node, owned by none).
func nodeIs(t *testing.T, observer *zkcoord.Session, path, data string, session int64) *zkcoord.Stat {
	t.Helper()
	var st *zkcoord.Stat
	testkit.WaitFor(t, 30*time.Second, path+" = "+data, func() error {
		got, s, err := observer.Get(testkit.Ctx(t, 10*time.Second), path)
		if err != nil {
			return err
		}
		if string(got) != data || s.EphemeralOwner != session {
			return errors.Join(testkit.ErrNotYet, errors.New(string(got)))
		}
		st = s
		return nil
	})
	return st
}

// createdTimes waits until k counted n creates, and fails if it counts
// more. The keeper counts a create when its own look at the node returns,
// which may be after an observer already sees the node.
func createdTimes(t *testing.T, k *Kept, n int) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("the node created %d times", n), func() error {
		switch got := k.Created(); {
		case got > n:
			t.Fatalf("created %d times, want %d", got, n)
		case got < n:
			return fmt.Errorf("%w: created %d times", testkit.ErrNotYet, got)
		}
		return nil
	})
}

// After the server expires its Session, KeepConfig creates the ephemeral
// node again on a new Session, with the data last set (not the data it
// started with), and reports the end of the old Session and the recovery.
func TestKeepConfigRecreatesAfterExpiry(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sessions := zktest.NewSessionRecorder(nil)
	k, log := keepConfig(t, ctx, servers, sessions, "/svc/me", "v1")
	observer := connect(t)
	started, _ := log.Await(t, 30*time.Second, 0, zkcoord.SessionStarted)
	id, passwd := sessions.Session()
	if started.Session != id {
		t.Fatalf("started on session 0x%x, the server gave 0x%x", started.Session, id)
	}
	if err := k.Set(ctx, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	nodeIs(t, observer, "/svc/me", "v2", id)

	if err := cluster.ExpireSession(ctx, id, passwd); err != nil {
		t.Fatal(err)
	}
	ended, at := log.Await(t, 30*time.Second, 0, zkcoord.SessionEnded)
	if ended.Session != id || !errors.Is(ended.Err, zkcoord.ErrSessionExpired) {
		t.Fatalf("ended %+v, want session 0x%x expired", ended, id)
	}
	recovered, _ := log.Await(t, 30*time.Second, at, zkcoord.Recovered)
	if recovered.Session == id || recovered.Session == 0 {
		t.Fatalf("recovered on session 0x%x, want a new one", recovered.Session)
	}
	nodeIs(t, observer, "/svc/me", "v2", recovered.Session)
	createdTimes(t, k, 2) // once per Session
	if err := k.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := observer.Exists(ctx, "/svc/me"); err != nil || ok {
		t.Fatalf("the node outlived Close: %v, %v", ok, err)
	}
}

// A TTL node outlives a partition that ends its keeper's Session: the
// keeper's next Session keeps the same node (no second create) and writes
// the data set while no Session was open.
func TestKeepConfigTTLAcrossPartition(t *testing.T) {
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+
		" -Dzookeeper.extendedTypesEnabled=true -Dznode.container.checkIntervalMs=100"))
	c := zktest.Start(t)
	ctx := testkit.Ctx(t, 2*time.Minute)
	proxy := c.NewProxy(t)
	k, log := keepConfig(t, ctx, proxy.Servers(), zktest.NewSessionRecorder(nil), "/ttl", "v1", WithTTL(time.Minute))
	observer := testkit.Connect(t, c.Servers())
	before := nodeIs(t, observer, "/ttl", "v1", 0)
	_, at := log.Await(t, 30*time.Second, 0, zkcoord.SessionStarted)

	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	ended, at := log.Await(t, 30*time.Second, at, zkcoord.SessionEnded)
	if !errors.Is(ended.Err, zkcoord.ErrSessionLost) {
		t.Fatalf("ended %+v, want the session lost", ended)
	}
	if err := k.Set(ctx, []byte("v2")); err != nil {
		t.Fatalf("Set between Sessions: %v", err)
	}
	log.Await(t, 30*time.Second, at, zkcoord.Recovering) // the proxy refuses
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	log.Await(t, 30*time.Second, at, zkcoord.Recovered)
	after := nodeIs(t, observer, "/ttl", "v2", 0)
	if after.Czxid != before.Czxid || k.Created() != 1 {
		t.Fatalf("the TTL node was created again (czxid 0x%x, was 0x%x; created %d times)", after.Czxid, before.Czxid, k.Created())
	}
}

// Keep runs on one Session: recovery events need KeepConfig.
func TestKeepRejectsRecoveryEvents(t *testing.T) {
	_, err := Keep(testkit.Ctx(t, time.Minute), connect(t), "/x", nil, WithRecoveryEvents(make(chan zkcoord.RecoveryEvent)))
	if !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("Keep with recovery events = %v, want ErrInvalidConfig", err)
	}
}

// After a partition that ends the keeper's Session locally, the keeper's
// next Session owns the node, with the data set meanwhile: the old
// Session's node, if the server still holds it, is deleted, never kept.
func TestKeepConfigReplacesStaleNodeAfterPartition(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	proxy := cluster.NewProxy(t)
	sessions := zktest.NewSessionRecorder(nil)
	k, log := keepConfig(t, ctx, proxy.Servers(), sessions, "/svc/me", "v1")
	observer := connect(t)
	started, at := log.Await(t, 30*time.Second, 0, zkcoord.SessionStarted)
	nodeIs(t, observer, "/svc/me", "v1", started.Session)

	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	ended, at := log.Await(t, 30*time.Second, at, zkcoord.SessionEnded)
	if !errors.Is(ended.Err, zkcoord.ErrSessionLost) {
		t.Fatalf("ended %+v, want the session lost", ended)
	}
	if err := k.Set(ctx, []byte("v2")); err != nil {
		t.Fatalf("Set between Sessions: %v", err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	recovered, _ := log.Await(t, 30*time.Second, at, zkcoord.Recovered)
	nodeIs(t, observer, "/svc/me", "v2", recovered.Session)
	createdTimes(t, k, 2)
}
