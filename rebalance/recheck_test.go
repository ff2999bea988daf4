package rebalance_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/rebalance"
)

// TestRecheckCatchesLostNotification: a follower whose notification of the
// coordinator's departure is lost still becomes coordinator, through the
// election engine's periodic re-check.
func TestRecheckCatchesLostNotification(t *testing.T) {
	root, group := newRoot(t), "g"
	rec := newRecorder()
	a := start(t, connect(t), root, group, rec.handler("a"))
	drop, dropped := rebalance.DropNextNotificationForTest()
	b := start(t, connect(t), root, group, rec.handler("b"), rebalance.WithRecheck(time.Second), drop)
	waitFor(t, 30*time.Second, "roles", func() error {
		if a.State() != rebalance.Coordinator || b.State() != rebalance.Follower {
			return fmt.Errorf("a %v, b %v", a.State(), b.State())
		}
		return nil
	})
	if err := a.Stop(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "b coordinator without its notification", func() error {
		if b.State() != rebalance.Coordinator {
			return fmt.Errorf("b %v", b.State())
		}
		return nil
	})
	if !dropped() {
		t.Fatal("no notification was dropped: the test proved nothing")
	}
}
