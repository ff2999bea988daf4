package election_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// TestPartitionedLeaderStopsFirst: the leader is cut off from ZooKeeper.
// Its Leadership.Done must close before any other candidate becomes
// leader. A hook runs in the follower's goroutine right after it took
// office and checks, at that moment, that the old leader's Done is
// already closed.
func TestPartitionedLeaderStopsFirst(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	proxy := shared.NewProxy(t)
	timeout := func(c *zkcoord.Config) { c.SessionTimeout = 4 * time.Second }
	s1 := connect(t, proxy.Servers(), timeout)
	s2 := connect(t, shared.Servers(), timeout)

	old, err := newElection(t, s1, path, election.WithID("old")).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		checked   bool
		overlap   bool
		oldDoneAt time.Time
	)
	go func() {
		<-old.Done()
		mu.Lock()
		oldDoneAt = time.Now()
		mu.Unlock()
	}()
	e2 := newElection(t, s2, path, election.WithID("next"))
	election.SetAfterTakeOfficeForTest(e2, func(string) {
		mu.Lock()
		defer mu.Unlock()
		checked = true
		overlap = !closed(old.Done())
	})
	next, err := e2.Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next.State().FollowingID != "old" {
		t.Fatalf("next: %+v", next.State())
	}

	cutAt := time.Now()
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, next.Elected(), long, "next elected")
	electedAt := time.Now()
	mu.Lock()
	defer mu.Unlock()
	if !checked || overlap {
		t.Fatalf("next took office while the old leader's Done was still open (checked %v)", checked)
	}
	if !errors.Is(old.Err(), election.ErrLost) || !errors.Is(old.Err(), zkcoord.ErrSessionLost) {
		t.Fatalf("old leader's Err = %v, want a local loss declaration", old.Err())
	}
	t.Logf("partitioned at 0; old leader stopped after %v; next elected after %v",
		oldDoneAt.Sub(cutAt).Round(time.Millisecond), electedAt.Sub(cutAt).Round(time.Millisecond))
	if err := old.Resign(ctx); !errors.Is(err, election.ErrLost) {
		t.Fatalf("Resign on a lost Session: %v, want an error saying the node was not deleted", err)
	}
	proxy.Heal()
	next.Resign(ctx)
}

// TestShortOutageKeepsLeadership: a connection outage shorter than the
// Session's loss window changes nothing.
func TestShortOutageKeepsLeadership(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	proxy := shared.NewProxy(t)
	rec := newRecorder()
	sess := connect(t, proxy.Servers(), func(c *zkcoord.Config) { c.SessionTimeout = 8 * time.Second })
	e := newElection(t, sess, path, election.WithEvents(rec.ch))
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := e.Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := sess.Watch(ctx)
	<-states // current
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	if st := recv(t, states, long, "session state"); st.State != zkcoord.Suspended {
		t.Fatalf("state %v", st.State)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	if st := recv(t, states, long, "session state"); st.State != zkcoord.Reconnected {
		t.Fatalf("state %v", st.State)
	}
	testkit.Eventually(t, long, "reconnected events", func() bool {
		return rec.count(func(ev election.Event) bool { return ev.Type == election.EventReconnected }) == 2
	})
	if closed(l.Done()) || f.Role() != election.Following || f.State().Following != l.Node() {
		t.Fatalf("after the outage: leader err %v, follower %+v", l.Err(), f.State())
	}
	l.Resign(ctx)
	waitClosed(t, f.Elected(), long, "follower elected")
	f.Resign(ctx)
}

// TestEnsembleServerKilled: the server the leader is connected to is
// killed; the Session moves to another server within its loss window, the
// leader keeps leading, the follower keeps following, and a later
// election works.
func TestEnsembleServerKilled(t *testing.T) {
	ctx := testCtx(t, 2*long)
	cluster := zktest.Start(t, zktest.WithServers(3))
	path := uniquePath(t)
	rec := newRecorder()
	timeout := func(c *zkcoord.Config) { c.SessionTimeout = 10 * time.Second }
	sl := connect(t, cluster.Servers(), timeout)
	sf := connect(t, cluster.Servers(), timeout)
	l, err := newElection(t, sl, path, election.WithID("leader"), election.WithEvents(rec.ch)).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newElection(t, sf, path, election.WithID("follower"), election.WithEvents(rec.ch)).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := sl.Watch(ctx)
	<-states
	victim := -1
	for i := 0; i < cluster.Len(); i++ {
		if cluster.Server(i).Addr() == sl.Server() {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("leader's server %s is not in the cluster", sl.Server())
	}
	if err := cluster.Server(victim).Kill(); err != nil {
		t.Fatal(err)
	}
	for {
		st := recv(t, states, long, "leader's session state")
		if st.State == zkcoord.Reconnected {
			break
		}
		if st.State.Terminal() {
			t.Fatalf("leader's session ended: %v", st.Err)
		}
	}
	if sl.Server() == cluster.Server(victim).Addr() {
		t.Fatalf("reconnected to the killed server")
	}
	testkit.Eventually(t, long, "leader reports the reconnect", func() bool {
		return rec.count(func(ev election.Event) bool {
			return ev.Type == election.EventReconnected && ev.Node == l.Node()
		}) == 1
	})
	if closed(l.Done()) || l.Err() != nil {
		t.Fatalf("leadership lost across a reconnect: %v", l.Err())
	}
	if f.Role() != election.Following || f.State().Following != l.Node() {
		t.Fatalf("follower: %+v", f.State())
	}
	who, err := newElection(t, sf, path).Leader(ctx)
	if err != nil || who.Node != l.Node() || !who.Acting {
		t.Fatalf("Leader: %+v, %v", who, err)
	}
	// The next election works.
	if err := l.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, f.Elected(), long, "follower elected")
	if f.Leadership().Token() <= l.Token() || f.Leadership().Term() <= l.Term() {
		t.Fatalf("token %d term %d after token %d term %d", f.Leadership().Token(), f.Leadership().Term(), l.Token(), l.Term())
	}
	f.Resign(context.Background())
}

// TestLeaderStepsDownBeforeReading: when the term node changes or the
// leader's node is deleted, the leader's Done closes before it asks
// ZooKeeper why, so a connection that goes silent right after the
// notification does not keep it leading until the Session is declared
// Lost, while the successor already acts.
func TestLeaderStepsDownBeforeReading(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(ctx context.Context, admin *zkcoord.Session, e *election.Election, l *election.Leadership) error
		want   error
	}{
		{"term bumped", func(ctx context.Context, admin *zkcoord.Session, e *election.Election, _ *election.Leadership) error {
			_, err := admin.Set(ctx, e.TermPath(), []byte(`{"id":"usurper","node":"/x"}`), -1)
			return err
		}, election.ErrDeposed},
		{"node deleted", func(ctx context.Context, admin *zkcoord.Session, _ *election.Election, l *election.Leadership) error {
			return admin.Delete(ctx, l.Node(), -1)
		}, election.ErrNodeDeleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, long)
			path := uniquePath(t)
			proxy := shared.NewProxy(t)
			sess := connect(t, proxy.Servers(), func(c *zkcoord.Config) { c.SessionTimeout = 9 * time.Second })
			admin := connect(t, shared.Servers())
			e := newElection(t, sess, path)
			// The connection goes silent as soon as the notification is in.
			var once sync.Once
			election.SetLeaderNotifiedForTest(e, func(string) {
				once.Do(func() {
					if err := proxy.Blackhole(); err != nil {
						t.Error(err)
					}
				})
			})
			l, err := e.Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.change(ctx, admin, e, l); err != nil {
				t.Fatal(err)
			}
			waitClosed(t, l.Done(), long, "leadership ended")
			if err := sess.Err(); err != nil {
				t.Fatalf("Done closed only after the Session ended (%v): the leader waited for a read", err)
			}
			if !errors.Is(l.Err(), tc.want) || l.Context().Err() == nil {
				t.Fatalf("Err %v, context %v; want %v and a cancelled context", l.Err(), l.Context().Err(), tc.want)
			}
			// The read that explains the change fails once the Session is
			// declared Lost; the candidate finishes then.
			waitClosed(t, l.Candidate().Done(), long, "candidate finished")
			proxy.Heal()
		})
	}
}

// TestSlowEventReaderDoesNotDelayLoss: a reader of the WithEvents channel
// that stops reading does not keep a partitioned leader leading: Done
// closes and the context is cancelled when the Session is declared Lost,
// and the candidate finishes, dropping the events the reader has no room
// for, so that nothing is left running for it.
func TestSlowEventReaderDoesNotDelayLoss(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	proxy := shared.NewProxy(t)
	sess := connect(t, proxy.Servers())
	release, stop, stopped := make(chan struct{}), make(chan struct{}), make(chan struct{})
	blocked := make(chan struct{}, 1)
	events := make(chan election.Event) // no room: only a reader takes them
	go func() {
		defer close(stopped)
		for {
			select {
			case ev := <-events:
				if ev.Type == election.EventSuspended {
					blocked <- struct{}{}
					<-release // the reader stops reading
				}
			case <-stop:
				return
			}
		}
	}()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { unblock(); close(stop); <-stopped })
	l, err := newElection(t, sess, path, election.WithEvents(events)).Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	recv(t, blocked, long, "reader received EventSuspended")
	waitClosed(t, sess.Done(), long, "Session declared Lost")
	waitClosed(t, l.Done(), long, "leadership ended while the reader does not read")
	if !errors.Is(l.Err(), election.ErrLost) || l.Context().Err() == nil {
		t.Fatalf("Err %v, context %v", l.Err(), l.Context().Err())
	}
	waitClosed(t, l.Candidate().Done(), long, "candidate finished while the reader does not read")
	proxy.Heal()
}

// TestLeadershipContextEndsWithSession: Leadership.Context derives from
// the Session's, so it is cancelled when the Session ends even while the
// candidate's goroutine is busy (here held in a test hook as it reacts to
// a change of the term node).
func TestLeadershipContextEndsWithSession(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	admin := connect(t, shared.Servers())
	e := newElection(t, sess, path)
	held, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	election.SetLeaderNotifiedForTest(e, func(string) {
		held <- struct{}{}
		<-release
	})
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Set(ctx, e.TermPath(), []byte(`{"id":"usurper","node":"/x"}`), -1); err != nil {
		t.Fatal(err)
	}
	recv(t, held, long, "leader notified")
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, l.Context().Done(), long, "leadership context cancelled with the Session")
	if cause := context.Cause(l.Context()); !errors.Is(cause, election.ErrLost) || !errors.Is(cause, zkcoord.ErrSessionClosed) {
		t.Fatalf("context cause %v, want ErrLost wrapping the Session's end", cause)
	}
	unblock()
	waitClosed(t, l.Candidate().Done(), long, "candidate finished")
}
