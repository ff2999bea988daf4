package rebalance_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// A failed socket write while the owner sets its barrier watch again is a
// connection loss, not the end of watching: a later deletion of the
// barrier by someone else still stops the resource.
func TestBarrierWatchAcrossRawWriteError(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0")
	var f testkit.WriteFault
	cfg := config(cluster.Servers())
	cfg.Dialer = f.Dial
	sess, err := zkcoord.Connect(testCtx(t, 30*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(testCtx(t, 10*time.Second)) })
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	start(t, sess, root, group, rec.handler("a"))
	testkit.WaitFor(t, 30*time.Second, "r0 running", func() error {
		if rec.holders()["r0"] != "a" {
			return testkit.ErrNotYet
		}
		return nil
	})
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	barrier := barriers + "/r0"
	hit := f.FailNext(testkit.OpExists, barrier)
	data, _, err := op.Get(ctx, barrier)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Set(ctx, barrier, data, -1); err != nil { // fires the owner's watch
		t.Fatal(err)
	}
	select {
	case <-hit:
	case <-ctx.Done():
		t.Fatal("the owner never watched its barrier again")
	}
	// The watch is set again on the same Session, and nothing stopped.
	testkit.WaitFor(t, 30*time.Second, "the barrier watched again", func() error {
		w, err := cluster.Server(0).Wchc(ctx)
		if err != nil {
			return err
		}
		if !slices.Contains(w[sess.ID()], barrier) {
			return testkit.ErrNotYet
		}
		return nil
	})
	if n := rec.stopCounts()["r0"]; n != 0 {
		t.Fatalf("r0 stopped %d times across a connection loss", n)
	}
	if err := op.Delete(ctx, barrier, -1); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "r0 stopped for its lost barrier", func() error {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !slices.ContainsFunc(rec.causes, func(err error) bool { return errors.Is(err, rebalance.ErrBarrierLost) }) {
			return testkit.ErrNotYet
		}
		return nil
	})
	rec.check(t)
}
