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
