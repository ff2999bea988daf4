package zkcoord_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// A follower cut off from the ZooKeeper leader keeps answering its clients
// for syncLimit × tickTime while the leader, hearing nothing of their
// sessions, expires them. When the session timeout leaves room for that
// (docs/protocol.md, "The ensemble assumption"), the Session is Lost before
// the leader expires it; when it does not, Connect warns, and the leader
// can expire the session first.
func TestFollowerCutOffFromLeader(t *testing.T) {
	t.Run("relation holds", func(t *testing.T) {
		lost, expired, warned := cutOffFollower(t, 12*time.Second, 0.5)
		t.Logf("Lost %v, leader's expiry %v after the cut", lost, expired)
		if warned {
			t.Error("Connect warned although the timeout leaves room for a cut-off follower")
		}
		if lost >= expired {
			t.Fatalf("the Session was declared Lost %v after the cut, not before the leader expired it (%v)", lost, expired)
		}
	})
	t.Run("relation violated", func(t *testing.T) {
		lost, expired, warned := cutOffFollower(t, 4*time.Second, zkcoord.DefaultLostAfter)
		t.Logf("Lost %v, leader's expiry %v after the cut", lost, expired)
		if !warned {
			t.Fatal("Connect did not warn although a cut-off follower can outlast the leader's expiry")
		}
		if lost > expired {
			t.Logf("as the relation predicts, the leader expired the session %v before the Session was Lost", lost-expired)
		}
	})
}

// cutOffFollower connects a Session with timeout T and lostAfter to one
// follower of a fresh ensemble only, cuts that follower's link to the
// leader, and returns when, after the cut, the Session was declared Lost
// and the leader expired it (its ephemeral node's deletion, seen on the
// leader), and whether Connect warned about the ensemble's timing.
func cutOffFollower(t *testing.T, timeout time.Duration, lostAfter float64) (lost, expired time.Duration, warned bool) {
	links := zktest.NewPeerLinks()
	c := zktest.Start(t, zktest.WithServers(3), links.Option())
	t.Cleanup(links.Close)
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	follower := (leader + 1) % c.Len()
	ctx := testCtx(t, 3*timeout+30*time.Second)

	logs := &logRecords{}
	sess := connect(t, zkcoord.Config{Servers: []string{c.Servers()[follower]}, SessionTimeout: timeout,
		LostAfter: lostAfter, Logger: slog.New(logs)})
	node, err := sess.Create(ctx, "/cutoff-"+t.Name()[len("TestFollowerCutOffFromLeader/"):], nil, zkcoord.FlagEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	observer := connect(t, zkcoord.Config{Servers: []string{c.Servers()[leader]}})
	if err := observer.Sync(ctx, node); err != nil {
		t.Fatal(err)
	}
	ok, _, gone, err := observer.ExistsW(ctx, node)
	if err != nil || !ok {
		t.Fatalf("the observer on the leader does not see %s (%v)", node, err)
	}
	// Connect's check runs in the background.
	testkit.Eventually(t, 20*time.Second, "Connect's check of the ensemble's timing", func() bool {
		return logs.has(slog.LevelWarn, "follower cut off") || logs.has(slog.LevelDebug, "ensemble timing leaves Lost before expiry")
	})
	warned = logs.has(slog.LevelWarn, "follower cut off")

	cut := time.Now()
	if err := links.Link(follower, leader).Blackhole(); err != nil {
		t.Fatal(err)
	}
	var lostAt, expiredAt time.Time
	done := sess.Done()
	for lostAt.IsZero() || expiredAt.IsZero() {
		select {
		case <-done:
			lostAt, done = time.Now(), nil
		case ev := <-gone:
			if ev.Type != zkcoord.EventNodeDeleted {
				t.Fatalf("the observer saw %v on %s", ev.Type, node)
			}
			expiredAt, gone = time.Now(), nil
		case <-ctx.Done():
			t.Fatalf("%v after the cut: Lost at %v, expiry at %v", time.Since(cut), lostAt, expiredAt)
		}
	}
	return lostAt.Sub(cut), expiredAt.Sub(cut), warned
}
