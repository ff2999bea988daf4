package rebalance_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
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
	testkit.WaitFor(t, 30*time.Second, "roles", func() error {
		if a.State() != rebalance.Coordinator || b.State() != rebalance.Follower {
			return fmt.Errorf("a %v, b %v", a.State(), b.State())
		}
		return nil
	})
	if err := a.Stop(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "b coordinator without its notification", func() error {
		if b.State() != rebalance.Coordinator {
			return fmt.Errorf("b %v", b.State())
		}
		return nil
	})
	if !dropped() {
		t.Fatal("no notification was dropped: the test proved nothing")
	}
}

// TestRecheckCatchesLostDeposition: a coordinator whose notification of a
// term bump is lost still abdicates, through its periodic re-check of the
// term.
func TestRecheckCatchesLostDeposition(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	rec := newRecorder()
	drop, dropped := rebalance.DropNextNotificationForTest()
	a := start(t, connect(t), root, group, rec.handler("a"), rebalance.WithRecheck(time.Second), drop)
	testkit.WaitFor(t, 30*time.Second, "a coordinator", func() error {
		if a.State() != rebalance.Coordinator {
			return fmt.Errorf("a %v", a.State())
		}
		return nil
	})
	// Another coordinator takes over: it bumps the term.
	termPath, _, _, _ := rebalance.PathsForTest(root, group)
	ctx := testCtx(t, 30*time.Second)
	if _, err := op.Set(ctx, termPath, []byte(`{"coordinator":"intruder"}`), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatalf("the deposed coordinator did not abdicate: state %v", a.State())
	}
	if !errors.Is(a.Err(), rebalance.ErrDeposed) {
		t.Fatalf("Err = %v, want ErrDeposed", a.Err())
	}
	if !dropped() {
		t.Fatal("no notification was dropped: the test proved nothing")
	}
}
