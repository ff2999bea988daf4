package discovery

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// supervisedConfig is the Config of Sessions in the test's chroot.
func supervisedConfig(t *testing.T) zkcoord.Config {
	return zkcoord.Config{Servers: servers, SessionTimeout: testkit.SessionTimeout, Chroot: testkit.Chroot(t)}
}

// expire ends the Session that holds r's registration on the server.
func expire(t *testing.T, ctx context.Context, r *SupervisedRegistration) *zkcoord.Session {
	t.Helper()
	r.mu.Lock()
	sess := r.sess
	r.mu.Unlock()
	if err := cluster.ExpireSession(ctx, sess.ID(), sess.Password()); err != nil {
		t.Fatal(err)
	}
	return sess
}

// A supervised registration survives the expiry of its Session: a new
// Session registers the instance again, with the data of the latest
// Update, whether that Update was written before the expiry or made while
// the Session was being replaced; the original data is never registered
// again. A cache following the service sees exactly that.
func TestSupervisedRegistrationReregistersTheLatestUpdate(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, 2*time.Minute)
	c, err := newDiscovery(t, sess, "/svc").NewCache(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if ev := next(t, ctx, c); ev.Type != Initialized {
		t.Fatalf("first event %v", ev)
	}
	rec := &testkit.Recoveries{}
	r, err := RegisterConfig(ctx, supervisedConfig(t), "/svc", Instance{Name: "web", ID: "w", Address: "h", Port: 1},
		WithRecoveryEvents(rec.C()))
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ctx, c); ev.Type != Added || ev.Instance.Port != 1 {
		t.Fatalf("after RegisterConfig: %v %+v", ev, ev.Instance)
	}
	in := r.Instance()
	in.Port = 2
	if err := r.Update(ctx, in); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ctx, c); ev.Type != Updated || ev.Instance.Port != 2 {
		t.Fatalf("after Update: %v %+v", ev, ev.Instance)
	}

	// Expired with port 2 written: registered again with port 2.
	first := expire(t, ctx, r)
	if ev := next(t, ctx, c); ev.Type != Removed {
		t.Fatalf("after the expiry: %v", ev)
	}
	if ev := next(t, ctx, c); ev.Type != Added || ev.Instance.Port != 2 {
		t.Fatalf("registered again as %v %+v, want port 2", ev, ev.Instance)
	}
	if _, st, err := sess.Exists(ctx, "/svc/web/w"); err != nil || st.EphemeralOwner == first.ID() {
		t.Fatalf("the node after recovery: owner %x, %v", st.EphemeralOwner, err)
	}

	// Expired, then updated at once: whether the update meets the old
	// Session or the new one, port 3 ends up registered, and port 2 never
	// comes back after it.
	second := expire(t, ctx, r)
	in.Port = 3
	if err := r.Update(ctx, in); err != nil {
		t.Fatal(err)
	}
	for seen3 := false; !seen3; {
		ev := next(t, ctx, c)
		switch {
		case ev.Type == Removed:
		case ev.Type == Added || ev.Type == Updated:
			if ev.Instance.Port == 1 {
				t.Fatalf("the original data came back: %+v", ev.Instance)
			}
			seen3 = ev.Instance.Port == 3
		default:
			t.Fatalf("unexpected %v", ev)
		}
	}
	if got, _ := c.Instances(); len(got) != 1 || got[0].Port != 3 {
		t.Fatalf("after the second expiry: %+v", got)
	}
	if _, st, err := sess.Exists(ctx, "/svc/web/w"); err != nil || st.EphemeralOwner == first.ID() || st.EphemeralOwner == second.ID() {
		t.Fatalf("the node after the second recovery: owner %x, %v", st.EphemeralOwner, err)
	}

	if err := r.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ctx, c); ev.Type != Removed || ev.Instance.Port != 3 {
		t.Fatalf("after Unregister: %v %+v", ev, ev.Instance)
	}
	<-r.Done()
	if err := r.Err(); err != nil {
		t.Errorf("Err after Unregister: %v", err)
	}
	if err := r.Update(ctx, in); !errors.Is(err, ErrStopped) {
		t.Errorf("Update after Unregister: %v", err)
	}
	// Supervise reported both losses and both recoveries.
	events := rec.Events()
	var kinds []zkcoord.RecoveryKind
	for _, ev := range events {
		if ev.Kind != zkcoord.Recovering {
			kinds = append(kinds, ev.Kind)
		}
	}
	want := []zkcoord.RecoveryKind{zkcoord.SessionStarted, zkcoord.SessionEnded, zkcoord.Recovered, zkcoord.SessionEnded, zkcoord.Recovered}
	if len(kinds) != len(want) {
		t.Fatalf("recovery events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("recovery events %v, want %v", kinds, want)
		}
	}
	if !errors.Is(events[1].Err, zkcoord.ErrSessionExpired) {
		t.Errorf("the first end: %v", events[1].Err)
	}
}

func TestRegisterConfigRejectsBadInput(t *testing.T) {
	ctx := testkit.Ctx(t, wait)
	cfg := supervisedConfig(t)
	for _, c := range []struct {
		base string
		in   Instance
	}{
		{"svc", Instance{Name: "web", Address: "h"}},
		{"/svc", Instance{Name: "", Address: "h"}},
		{"/svc", Instance{Name: "web", ID: "x/y", Address: "h"}},
		{"/svc", Instance{Name: "web"}},
		{"/svc", Instance{Name: "web", Address: "h", ServiceType: "ODD"}},
	} {
		if _, err := RegisterConfig(ctx, cfg, c.base, c.in); !errors.Is(err, ErrInvalid) {
			t.Errorf("RegisterConfig(%q, %+v): %v", c.base, c.in, err)
		}
	}
	if _, err := RegisterConfig(ctx, zkcoord.Config{}, "/svc", Instance{Name: "web", Address: "h"}); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Errorf("RegisterConfig without servers: %v", err)
	}
}

// Without supervision, an Update that fails because the Session expired
// still records the data, and Reregister registers it, not the data
// registered first.
func TestReregisterUsesTheLatestUpdate(t *testing.T) {
	first := connect(t)
	ctx := testkit.Ctx(t, wait)
	r := register(t, newDiscovery(t, first, "/svc"), Instance{Name: "web", ID: "w", Address: "h", Port: 1})
	if err := cluster.ExpireSession(ctx, first.ID(), first.Password()); err != nil {
		t.Fatal(err)
	}
	<-first.Done()
	in := r.Instance()
	in.Port = 2
	if err := r.Update(ctx, in); !errors.Is(err, zkcoord.ErrSessionExpired) {
		t.Fatalf("Update on an expired Session: %v", err)
	}
	if got := r.Instance(); got.Port != 2 {
		t.Fatalf("Instance after the failed Update: %+v", got)
	}
	second := connect(t)
	d := newDiscovery(t, second, "/svc")
	if err := r.Reregister(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Instance(ctx, "web", "w"); err != nil || got.Port != 2 {
		t.Fatalf("registered again as %+v, %v; want port 2", got, err)
	}
}

// Unregistering a supervised Static instance deletes its persistent node.
func TestSupervisedStaticInstanceUnregisters(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	r, err := RegisterConfig(ctx, supervisedConfig(t), "/svc", Instance{Name: "web", ID: "s", Address: "h", ServiceType: Static})
	if err != nil {
		t.Fatal(err)
	}
	if ok, st, err := sess.Exists(ctx, "/svc/web/s"); err != nil || !ok || st.EphemeralOwner != 0 {
		t.Fatalf("registered: exists %v, %+v, %v", ok, st, err)
	}
	if err := r.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := sess.Exists(ctx, "/svc/web/s"); err != nil || ok {
		t.Fatalf("after Unregister: exists %v, %v", ok, err)
	}
}

// The session-bound provider refuses recovery events, which only a
// registration kept across Sessions can report.
func TestProviderRefusesRecoveryEvents(t *testing.T) {
	ctx, sess := testkit.Ctx(t, time.Minute), connect(t)
	d, err := New(sess, "/svc-refuse")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.NewProvider(ctx, "web", WithRecoveryEvents(make(chan zkcoord.RecoveryEvent))); !errors.Is(err, ErrInvalid) {
		t.Fatalf("NewProvider with WithRecoveryEvents: %v, want ErrInvalid", err)
	}
}
