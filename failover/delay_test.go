package failover_test

import (
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/failover"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// TestLockDelayLetsTheOldActiveStop: as in TestUncleanExitIsFenced, the
// active instance is cut off and its session expired on the server while
// it still runs. With a lock-delay longer than the time its Session takes
// to declare itself Lost, the standby's fencing finds it already stopped:
// the delay, not the fencing, kept them apart.
func TestLockDelayLetsTheOldActiveStop(t *testing.T) {
	const d = 8 * time.Second // twice the session timeout of connect
	ctx := testCtx(t, long)
	path := uniquePath(t)
	w := newWorld()
	proxy := shared.NewProxy(t)
	sa := connect(t, proxy.Servers())
	a := start(t, w, sa, path, "a", failover.WithLockDelay(d))
	testkit.Eventually(t, long, "a active", func() bool { return w.current() == "a" })
	b := start(t, w, connect(t, shared.Servers()), path, "b", failover.WithLockDelay(d))
	testkit.Eventually(t, long, "b standing by", func() bool {
		c, err := b.f.Election().Leader(ctx)
		return err == nil && c.ID == "a"
	})
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := shared.ExpireSession(ctx, sa.ID(), sa.Password()); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, long, "b active", func() bool { return w.lastActivation().id == "b" })
	if took := time.Since(start); took < d {
		t.Errorf("b active %v after the expiry, before the lock-delay of %v", took, d)
	}
	w.mu.Lock()
	stopped := w.stoppedAtFence
	w.mu.Unlock()
	if len(stopped) != 1 || !stopped[0] {
		t.Fatalf("a stopped by itself before b fenced it: %v, want [true]", stopped)
	}
	w.checkNoOverlap(t)
	proxy.Heal()
	if err := a.wait(t); err == nil {
		t.Fatalf("a's Run returned nil after its session ended")
	}
	b.cancel()
	b.wait(t)
}
