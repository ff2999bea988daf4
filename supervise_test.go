package zkcoord_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/failover"
	"github.com/zkcoord/zkcoord/group"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/zktest"
)

// ownership is one lock, leadership or membership a supervised work held:
// its token (0 for a membership) and the session it was held on.
type ownership struct {
	what    string
	token   int64
	session int64
	passwd  []byte
	ended   chan struct{}
}

// recorder collects what supervised work owned and the recovery events.
type recorder struct {
	mu     sync.Mutex
	owned  []ownership
	ch     chan zkcoord.RecoveryEvent // the events not yet read into events
	events []zkcoord.RecoveryEvent
}

func (r *recorder) own(o ownership) {
	r.mu.Lock()
	r.owned = append(r.owned, o)
	r.mu.Unlock()
}

// eventsTo returns the channel to pass to WithRecoveryEvents.
func (r *recorder) eventsTo() chan<- zkcoord.RecoveryEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch == nil {
		r.ch = make(chan zkcoord.RecoveryEvent, 256)
	}
	return r.ch
}

func (r *recorder) snapshot() ([]ownership, []zkcoord.RecoveryEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.ch) > 0 {
		r.events = append(r.events, <-r.ch)
	}
	return append([]ownership(nil), r.owned...), append([]zkcoord.RecoveryEvent(nil), r.events...)
}

// count returns how many ownerships of what were taken.
func (r *recorder) count(what string) int {
	owned, _ := r.snapshot()
	n := 0
	for _, o := range owned {
		if o.what == what {
			n++
		}
	}
	return n
}

// work is what a service does with each Session: lead an election, hold a
// lock and stay in a group until the Session ends.
func (r *recorder) work(ctx context.Context, sess *zkcoord.Session) error {
	e, err := election.New(sess, "/supervised/election")
	if err != nil {
		return err
	}
	lead, err := e.Campaign(ctx)
	if err != nil {
		return err
	}
	r.own(ownership{what: "leader", token: lead.Token(), session: sess.ID(), passwd: sess.Password(), ended: doneOf(lead.Done())})
	m, err := lock.NewMutex(sess, "/supervised/lock")
	if err != nil {
		return err
	}
	lease, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	r.own(ownership{what: "lock", token: lease.Token(), session: sess.ID(), passwd: sess.Password(), ended: doneOf(lease.Done())})
	mem, err := group.Join(ctx, sess, "/supervised/group", "worker", nil)
	if err != nil {
		return err
	}
	r.own(ownership{what: "member", session: sess.ID(), passwd: sess.Password(), ended: doneOf(mem.Done())})
	<-ctx.Done()
	return nil
}

func doneOf(ch <-chan struct{}) chan struct{} {
	out := make(chan struct{})
	go func() { <-ch; close(out) }()
	return out
}

// supervise runs r.work under Supervise until the test ends.
func (r *recorder) supervise(t *testing.T, cfg zkcoord.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- zkcoord.Supervise(ctx, cfg, r.work, zkcoord.WithRecoveryEvents(r.eventsTo()), zkcoord.WithMaxBackoff(time.Second))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Supervise = %v, want context.Canceled", err)
		}
	})
}

// checkRecovered waits until every ownership was taken again on a new
// session, then checks that each old one ended and each new one is new.
func (r *recorder) checkRecovered(t *testing.T, before int) {
	t.Helper()
	testkit.Eventually(t, 90*time.Second, "every ownership taken again on a new session", func() bool {
		return r.count("leader") > before && r.count("lock") > before && r.count("member") > before
	})
	owned, events := r.snapshot()
	last := map[string]ownership{}
	for _, o := range owned {
		if prev, ok := last[o.what]; ok {
			select {
			case <-prev.ended:
			default:
				t.Errorf("%s on session 0x%x was taken again before the old one ended", o.what, o.session)
			}
			if o.session == prev.session {
				t.Errorf("%s was taken again on the same session 0x%x", o.what, o.session)
			}
			if o.token != 0 && o.token <= prev.token {
				t.Errorf("%s token %d after %d: a new ownership must have a larger token", o.what, o.token, prev.token)
			}
		}
		last[o.what] = o
	}
	var kinds []zkcoord.RecoveryKind
	for _, ev := range events {
		kinds = append(kinds, ev.Kind)
	}
	if len(kinds) < 3 || kinds[0] != zkcoord.SessionStarted || !containsKind(kinds, zkcoord.SessionEnded) || kinds[len(kinds)-1] != zkcoord.Recovered {
		t.Errorf("recovery events %v; want session started, ..., session ended, ..., recovered", kinds)
	}
}

func containsKind(kinds []zkcoord.RecoveryKind, k zkcoord.RecoveryKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// The server expires the session on purpose: the work starts again on a new
// session and takes new ownerships.
func TestSuperviseAfterForcedExpiry(t *testing.T) {
	c := zktest.Start(t)
	r := &recorder{}
	r.supervise(t, zkcoord.Config{Servers: c.Servers(), SessionTimeout: 2 * time.Second})
	testkit.Eventually(t, 30*time.Second, "the first ownerships", func() bool { return r.count("member") == 1 })
	owned, _ := r.snapshot()
	ctx := testCtx(t, 30*time.Second)
	if err := c.ExpireSession(ctx, owned[0].session, owned[0].passwd); err != nil {
		t.Fatal(err)
	}
	r.checkRecovered(t, 1)
}

// A partition longer than the session timeout: the Session declares itself
// Lost, and after the network heals the work runs on a new session.
func TestSuperviseAfterLongPartition(t *testing.T) {
	c := zktest.Start(t)
	p := c.NewProxy(t)
	r := &recorder{}
	r.supervise(t, zkcoord.Config{Servers: p.Servers(), SessionTimeout: 2 * time.Second})
	testkit.Eventually(t, 30*time.Second, "the first ownerships", func() bool { return r.count("member") == 1 })
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the loss", func() bool {
		_, events := r.snapshot()
		return containsKind(kindsOf(events), zkcoord.SessionEnded)
	})
	// Keep the partition until the server, too, has expired the session.
	observer := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 60*time.Second)
	testkit.Eventually(t, 60*time.Second, "the server to expire the partitioned session", func() bool {
		members, err := group.Members(ctx, observer, "/supervised/group")
		return err == nil && len(members) == 0
	})
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	r.checkRecovered(t, 1)
}

// The only server is killed and comes back: attempts fail (Recovering)
// until it is back, then the work runs on a new session.
func TestSuperviseAfterServerKill(t *testing.T) {
	c := zktest.Start(t)
	r := &recorder{}
	r.supervise(t, zkcoord.Config{Servers: c.Servers(), SessionTimeout: 2 * time.Second})
	testkit.Eventually(t, 30*time.Second, "the first ownerships", func() bool { return r.count("member") == 1 })
	if err := c.Server(0).Kill(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "a failed attempt to recover", func() bool {
		_, events := r.snapshot()
		return containsKind(kindsOf(events), zkcoord.Recovering)
	})
	if err := c.Server(0).Start(); err != nil {
		t.Fatal(err)
	}
	r.checkRecovered(t, 1)
}

func kindsOf(events []zkcoord.RecoveryEvent) []zkcoord.RecoveryKind {
	var out []zkcoord.RecoveryKind
	for _, ev := range events {
		out = append(out, ev.Kind)
	}
	return out
}

// Supervise ends with the work when its Session is alive: nil when it is
// done, its error when it failed, and the Session's error for a loss a new
// Session cannot fix.
func TestSuperviseEnds(t *testing.T) {
	cfg := zkcoord.Config{Servers: sharedServers()}
	ctx := testCtx(t, 30*time.Second)
	runs := 0
	err := zkcoord.Supervise(ctx, cfg, func(ctx context.Context, sess *zkcoord.Session) error { runs++; return nil })
	if err != nil || runs != 1 {
		t.Fatalf("Supervise of finished work = %v after %d runs", err, runs)
	}
	boom := errors.New("boom")
	if err := zkcoord.Supervise(ctx, cfg, func(context.Context, *zkcoord.Session) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Supervise of failing work = %v", err)
	}
	err = zkcoord.Supervise(ctx, cfg, func(ctx context.Context, sess *zkcoord.Session) error {
		return sess.Close(ctx)
	})
	if !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Fatalf("Supervise of work that closed its Session = %v", err)
	}
	if err := zkcoord.Supervise(ctx, zkcoord.Config{}, nil); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("Supervise with no servers = %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err = zkcoord.Supervise(short, cfg, func(ctx context.Context, sess *zkcoord.Session) error { <-ctx.Done(); return ctx.Err() })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Supervise until ctx ends = %v", err)
	}
}

// A reader that does not read the events does not hold recovery back, and
// the events wait for it, in order, none dropped, while Supervise runs;
// once Supervise returned, nothing is left sending.
func TestSuperviseSlowEvents(t *testing.T) {
	c := zktest.Start(t)
	events := make(chan zkcoord.RecoveryEvent) // nobody reads until recovered
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sessions := make(chan *zkcoord.Session, 4)
	done := make(chan error, 1)
	go func() {
		done <- zkcoord.Supervise(ctx, zkcoord.Config{Servers: c.Servers(), SessionTimeout: 2 * time.Second},
			func(ctx context.Context, sess *zkcoord.Session) error {
				sessions <- sess
				<-ctx.Done()
				return nil
			}, zkcoord.WithRecoveryEvents(events))
	}()
	first := <-sessions
	tctx := testCtx(t, 30*time.Second)
	if err := c.ExpireSession(tctx, first.ID(), first.Password()); err != nil {
		t.Fatal(err)
	}
	var second *zkcoord.Session
	select {
	case second = <-sessions:
		if second.ID() == first.ID() {
			t.Fatal("the work ran on the same session again")
		}
	case <-tctx.Done():
		t.Fatal("no recovery while nobody read the events")
	}
	want := []struct {
		kind    zkcoord.RecoveryKind
		session int64
	}{{zkcoord.SessionStarted, first.ID()}, {zkcoord.SessionEnded, first.ID()}, {zkcoord.Recovered, second.ID()}}
	for i, w := range want {
		select {
		case ev := <-events:
			if ev.Kind != w.kind || ev.Session != w.session {
				t.Fatalf("event %d: %v of session 0x%x, want %v of 0x%x", i, ev.Kind, ev.Session, w.kind, w.session)
			}
		case <-tctx.Done():
			t.Fatalf("event %d (%v) never came", i, w.kind)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Supervise = %v", err)
	}
	select {
	case ev := <-events:
		t.Fatalf("event %v after Supervise returned", ev.Kind)
	default:
	}
}

// A failover instance under Supervise: after its session is expired it
// becomes active again on a new session, with a larger token, after the
// first activation has stopped, and fences its own earlier activation.
func TestSuperviseFailover(t *testing.T) {
	c := zktest.Start(t)
	type activation struct {
		token   int64
		session int64
		passwd  []byte
		stopped chan struct{}
	}
	acts := make(chan activation, 4)
	var fenced []failover.Breadcrumb
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- zkcoord.Supervise(ctx, zkcoord.Config{Servers: c.Servers(), SessionTimeout: 2 * time.Second},
			func(ctx context.Context, sess *zkcoord.Session) error {
				f, err := failover.New(sess, "/supervised/failover",
					func(_ context.Context, prev failover.Breadcrumb) error {
						mu.Lock()
						fenced = append(fenced, prev)
						mu.Unlock()
						return nil
					}, failover.WithID("only"))
				if err != nil {
					return err
				}
				return f.Run(ctx, func(ctx context.Context, a failover.Activation) error {
					stopped := make(chan struct{})
					acts <- activation{a.Token, sess.ID(), sess.Password(), stopped}
					<-ctx.Done()
					close(stopped)
					return ctx.Err()
				})
			})
	}()
	defer func() {
		cancel()
		<-done
	}()
	tctx := testCtx(t, 60*time.Second)
	first := <-acts
	if err := c.ExpireSession(tctx, first.session, first.passwd); err != nil {
		t.Fatal(err)
	}
	var second activation
	select {
	case second = <-acts:
	case <-tctx.Done():
		t.Fatal("no activation on a new session")
	}
	select {
	case <-first.stopped:
	default:
		t.Fatal("the second activation started before the first stopped")
	}
	if second.session == first.session || second.token <= first.token {
		t.Fatalf("second activation on session 0x%x token %d after 0x%x token %d", second.session, second.token, first.session, first.token)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fenced) != 1 || fenced[0].Token != first.token {
		t.Fatalf("fenced %+v; want the first activation's breadcrumb (token %d)", fenced, first.token)
	}
}

// With WithRestartIf, work's error decides: a restartable one closes the
// Session, even a live one, and the work runs again on a new session; any
// other ends Supervise, even after the Session was expired.
func TestSuperviseRestartIf(t *testing.T) {
	c := zktest.Start(t)
	cfg := zkcoord.Config{Servers: c.Servers(), SessionTimeout: 2 * time.Second}
	ctx := testCtx(t, 60*time.Second)
	again, fatal := errors.New("again"), errors.New("fatal")
	restartable := func(err error) bool { return errors.Is(err, again) || errors.Is(err, zkcoord.ErrSessionExpired) }

	r := &recorder{}
	var sessions []int64
	err := zkcoord.Supervise(ctx, cfg, func(ctx context.Context, sess *zkcoord.Session) error {
		sessions = append(sessions, sess.ID())
		if len(sessions) == 1 {
			return again // with the Session alive
		}
		return nil
	}, zkcoord.WithRestartIf(restartable), zkcoord.WithRecoveryEvents(r.eventsTo()))
	if err != nil || len(sessions) != 2 || sessions[0] == sessions[1] {
		t.Fatalf("Supervise = %v on sessions %x; want nil after a second run on a new session", err, sessions)
	}
	_, events := r.snapshot()
	want := []zkcoord.RecoveryKind{zkcoord.SessionStarted, zkcoord.SessionEnded, zkcoord.Recovered}
	if kinds := kindsOf(events); len(kinds) != 3 || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] || !errors.Is(events[1].Err, again) {
		t.Fatalf("events %+v; want %v, the end caused by the work's error", events, want)
	}

	runs := 0
	err = zkcoord.Supervise(ctx, cfg, func(_ context.Context, sess *zkcoord.Session) error {
		runs++
		if err := c.ExpireSession(ctx, sess.ID(), sess.Password()); err != nil {
			return err
		}
		<-sess.Done()
		return fmt.Errorf("%w after %w", fatal, sess.Err())
	}, zkcoord.WithRestartIf(func(err error) bool { return !errors.Is(err, fatal) }))
	if !errors.Is(err, fatal) || runs != 1 {
		t.Fatalf("Supervise = %v after %d runs; want the work's error after one run", err, runs)
	}
}
