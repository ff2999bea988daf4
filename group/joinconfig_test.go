package group

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// joinConfig joins /svc as id with JoinConfig, on Sessions to servers
// whose ids and passwords sessions records; recovery events land in the
// returned log.
func joinConfig(t *testing.T, ctx context.Context, servers []string, sessions *zktest.SessionRecorder, id, data string) (*Membership, *testkit.Recoveries) {
	t.Helper()
	cfg := testkit.Config(t, servers, func(c *zkcoord.Config) {
		c.Dialer = sessions.Dial
		c.SessionTimeout = 6 * time.Second
	})
	log := &testkit.Recoveries{}
	m, err := JoinConfig(ctx, cfg, "/svc", id, []byte(data), WithRecoveryEvents(log.C()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Leave(testkit.Ctx(t, 30*time.Second)) })
	return m, log
}

// memberIs waits until the group lists exactly one member: id, with data,
// owned by session.
func memberIs(t *testing.T, observer *zkcoord.Session, id, data string, session int64) Member {
	t.Helper()
	var got Member
	testkit.WaitFor(t, 30*time.Second, "member "+id, func() error {
		ms, err := Members(testkit.Ctx(t, 10*time.Second), observer, "/svc")
		if err != nil {
			return err
		}
		if len(ms) != 1 || ms[0].ID != id || string(ms[0].Data) != data || ms[0].Session != session {
			return errors.Join(testkit.ErrNotYet, errors.New(idsOf(ms)))
		}
		got = ms[0]
		return nil
	})
	return got
}

func idsOf(ms []Member) string {
	s := ""
	for _, m := range ms {
		s += m.Path + " "
	}
	return s
}

// noDoubles fails the test if w delivers a snapshot listing id twice.
func noDoubles(t *testing.T, w *Watcher, id string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for snap := range w.Changes() {
			n := 0
			for _, m := range snap {
				if m.ID == id {
					n++
				}
			}
			if n > 1 {
				t.Errorf("the group lists %s %d times: %s", id, n, idsOf(snap))
			}
		}
	}()
	return done
}

// After the server expires its Session, JoinConfig joins again on a new
// Session with the same id and data; the old node is gone, the membership
// goes on, and the recovery is reported.
func TestJoinConfigRejoinsAfterExpiry(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	observer := connect(t)
	w, err := Watch(ctx, observer, "/svc")
	if err != nil {
		t.Fatal(err)
	}
	watched := noDoubles(t, w, "me")
	sessions := zktest.NewSessionRecorder(nil)
	m, log := joinConfig(t, ctx, servers, sessions, "me", "addr-1")
	id, passwd := sessions.Session()
	first := memberIs(t, observer, "me", "addr-1", id)
	if first.Path != m.Path() {
		t.Fatalf("listed %s, Path %s", first.Path, m.Path())
	}

	if err := cluster.ExpireSession(ctx, id, passwd); err != nil {
		t.Fatal(err)
	}
	ended, at := log.Await(t, 30*time.Second, 0, zkcoord.SessionEnded)
	if ended.Session != id || !errors.Is(ended.Err, zkcoord.ErrSessionExpired) {
		t.Fatalf("ended %+v, want session 0x%x expired", ended, id)
	}
	recovered, _ := log.Await(t, 30*time.Second, at, zkcoord.Recovered)
	second := memberIs(t, observer, "me", "addr-1", recovered.Session)
	if second.Path == first.Path || second.Path != m.Path() {
		t.Fatalf("rejoined as %s (Path %s), want a new node (was %s)", second.Path, m.Path(), first.Path)
	}
	select {
	case <-m.Done():
		t.Fatalf("membership ended: %v", m.Err())
	default:
	}
	if err := m.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(m.Err(), ErrLeft) {
		t.Fatalf("Err after Leave = %v", m.Err())
	}
	if ms, err := Members(ctx, observer, "/svc"); err != nil || len(ms) != 0 {
		t.Fatalf("members after Leave: %v, %v", idsOf(ms), err)
	}
	w.Stop()
	<-watched
}

// After a partition that ends the member's Session locally, the member
// joins again on a new Session once the partition heals, and the group
// never lists it twice: the old Session's node, if the server still holds
// it, is deleted first.
func TestJoinConfigRejoinsAfterPartition(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	observer := connect(t)
	w, err := Watch(ctx, observer, "/svc")
	if err != nil {
		t.Fatal(err)
	}
	watched := noDoubles(t, w, "me")
	proxy := cluster.NewProxy(t)
	sessions := zktest.NewSessionRecorder(nil)
	m, log := joinConfig(t, ctx, proxy.Servers(), sessions, "me", "addr-1")
	started, at := log.Await(t, 30*time.Second, 0, zkcoord.SessionStarted)
	memberIs(t, observer, "me", "addr-1", started.Session)

	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	ended, at := log.Await(t, 30*time.Second, at, zkcoord.SessionEnded)
	if !errors.Is(ended.Err, zkcoord.ErrSessionLost) {
		t.Fatalf("ended %+v, want the session lost", ended)
	}
	log.Await(t, 30*time.Second, at, zkcoord.Recovering) // the proxy refuses
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	recovered, _ := log.Await(t, 30*time.Second, at, zkcoord.Recovered)
	memberIs(t, observer, "me", "addr-1", recovered.Session)
	if m.Err() != nil {
		t.Fatalf("membership ended: %v", m.Err())
	}
	w.Stop()
	<-watched
}

// Join runs on one Session: recovery events need JoinConfig.
func TestJoinRejectsRecoveryEvents(t *testing.T) {
	_, err := Join(testkit.Ctx(t, time.Minute), connect(t), "/svc", "me", nil, WithRecoveryEvents(make(chan zkcoord.RecoveryEvent)))
	if !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("Join with recovery events = %v, want ErrInvalidConfig", err)
	}
}
