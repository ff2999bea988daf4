package rebalance_test

import (
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance"
)

// TestReleaseAfterBarrierDeletedByHand: member r has read its barrier and
// is about to delete it when an operator deletes it by hand, and member n,
// the resource's next owner, creates its own at the same path (a barrier
// has a fixed name, and every barrier has version 0). r's transaction,
// guarded by the handover mark that n's take moved, fails: n keeps its
// barrier, the mark stays "held" (so whoever comes after n waits its
// lock-delay), and r's release ends without touching either.
func TestReleaseAfterBarrierDeletedByHand(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	root := newRoot(t)
	path, mark := zkcoord.Join(root, "barrier"), zkcoord.Join(root, "mark")
	op, r, n := connect(t), connect(t), connect(t)

	tokR, heldR, err := rebalance.TakeOverHeldForTest(ctx, r, path, mark, "r")
	if err != nil {
		t.Fatal(err)
	}
	_, st, err := r.Exists(ctx, path) // releaseBarrier's read
	if err != nil || st == nil || st.Czxid != tokR {
		t.Fatalf("r's barrier: %+v, %v", st, err)
	}
	if err := op.Delete(ctx, path, -1); err != nil { // by hand
		t.Fatal(err)
	}
	tokN, _, err := rebalance.TakeOverHeldForTest(ctx, n, path, mark, "n")
	if err != nil {
		t.Fatal(err)
	}

	intact := func(after string) {
		t.Helper()
		ok, st, err := op.Exists(ctx, path)
		if err != nil || !ok || st.Czxid != tokN {
			t.Fatalf("after %s: n's barrier (token %d) is gone: %v, %+v, %v", after, tokN, ok, st, err)
		}
		data, _, err := op.Get(ctx, mark)
		if err != nil || string(data) != "held" {
			t.Fatalf("after %s: mark %q, %v; want held", after, data, err)
		}
	}
	if err := rebalance.ReleaseAtVersionForTest(ctx, r, path, mark, heldR, st.Version); err != nil {
		t.Fatal(err)
	}
	intact("r's release transaction, sent after its read")
	if err := rebalance.ReleaseBarrierForTest(ctx, r, path, mark, tokR, heldR); err != nil {
		t.Fatal(err)
	}
	intact("r's release")
}

// TestTakeoverAfterMarkMadeAgain: member a reads a new resource's mark,
// "released" at version 0, and stalls before its create. Meanwhile the
// mark is deleted (the resource removed), member c takes the resource,
// finding no mark, and so creates the mark "held", at version 0 again,
// and c's session ends without a clean release. a's transaction, checking
// version 0, succeeds; but the mark it set is not the one it read, so the
// takeover must not count as clean: c may still be paused.
func TestTakeoverAfterMarkMadeAgain(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	root := newRoot(t)
	path, mark := zkcoord.Join(root, "barrier"), zkcoord.Join(root, "mark")
	op, a, c := connect(t), connect(t), connect(t)
	if err := op.EnsurePath(ctx, root); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Create(ctx, mark, []byte("released"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	stale, err := rebalance.ReadMarkForTest(ctx, a, mark)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Delete(ctx, mark, -1); err != nil {
		t.Fatal(err)
	}
	if _, clean, err := rebalance.TakeOverForTest(ctx, c, path, mark, "c"); err != nil || clean {
		t.Fatalf("c's takeover with no mark: clean %v, %v; want not clean", clean, err)
	}
	if err := op.Delete(ctx, path, -1); err != nil { // c's barrier vanishes unreleased
		t.Fatal(err)
	}
	_, st, err := op.Get(ctx, mark)
	if err != nil || st.Version != 0 {
		t.Fatalf("mark after c's take: %+v, %v; want version 0", st, err)
	}
	_, clean, err := rebalance.CreateBarrierForTest(ctx, a, path, mark, "a", stale)
	if err != nil {
		t.Fatalf("a's create with the mark read at version 0: %v", err)
	}
	if clean {
		t.Fatal("a's takeover after c's barrier vanished unreleased counts as clean")
	}
}
