package failover_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/failover"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// healthSwitch is a health check the test turns on and off.
type healthSwitch struct{ failing atomic.Bool }

func (h *healthSwitch) check(context.Context) error {
	if h.failing.Load() {
		return errors.New("unhealthy")
	}
	return nil
}

// An active instance whose health check keeps failing steps down, its
// standby takes over after fencing it, and it does not stand again until
// its check passes.
func TestUnhealthyActiveStepsDown(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	w := newWorld()
	ha, hb := &healthSwitch{}, &healthSwitch{}
	events := newEventLog()
	a := start(t, w, connect(t, shared.Servers()), path, "a",
		failover.WithHealthCheck(ha.check, 20*time.Millisecond, 3),
		failover.WithEvents(events.ch))
	testkit.Eventually(t, long, "a active", func() bool { return w.current() == "a" })
	start(t, w, connect(t, shared.Servers()), path, "b", failover.WithHealthCheck(hb.check, 20*time.Millisecond, 3))

	ha.failing.Store(true)
	testkit.Eventually(t, long, "b active after a's checks failed", func() bool { return w.current() == "b" })
	last := w.lastActivation()
	if last.a.Previous == nil || last.a.Previous.ID != "a" || !last.a.Fenced {
		t.Fatalf("b took over without fencing a: previous %+v, fenced %v", last.a.Previous, last.a.Fenced)
	}
	// a does not stand while unhealthy.
	l, err := a.f.Election().Leader(ctx)
	if err != nil || l.ID != "b" {
		t.Fatalf("leader %+v, %v; want b", l, err)
	}
	// a recovers and stands again; when b fails, a takes over.
	ha.failing.Store(false)
	hb.failing.Store(true)
	testkit.Eventually(t, long, "a active again", func() bool { return w.current() == "a" })
	w.checkNoOverlap(t)
	testkit.Eventually(t, long, "a's events unhealthy, then healthy", func() bool {
		types := events.types()
		u := slices.Index(types, failover.EventUnhealthy)
		return u >= 0 && slices.Contains(types[u:], failover.EventHealthy)
	})
}

// An instance that is unhealthy from the start never stands.
func TestUnhealthyNeverStands(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	w := newWorld()
	h := &healthSwitch{}
	h.failing.Store(true)
	a := start(t, w, connect(t, shared.Servers()), path, "a", failover.WithHealthCheck(h.check, 10*time.Millisecond, 2))
	// Give a many check intervals: it must not even register a candidate.
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if _, err := a.f.Election().Leader(ctx); err == nil {
			t.Fatal("an unhealthy instance stood for the lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.failing.Store(false)
	testkit.Eventually(t, long, "a active once healthy", func() bool { return w.current() == "a" })
}

func TestHealthCheckOptions(t *testing.T) {
	sess := connect(t, shared.Servers())
	w := newWorld()
	for _, opt := range []failover.Option{
		failover.WithHealthCheck((&healthSwitch{}).check, 0, 3),
		failover.WithHealthCheck((&healthSwitch{}).check, time.Second, 0),
	} {
		if _, err := failover.New(sess, "/x", w.fence, opt); err == nil {
			t.Fatal("an invalid health check was accepted")
		}
	}
}
