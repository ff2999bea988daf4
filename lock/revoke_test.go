package lock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

// A revocation request reaches the holder as an event; the lease stays
// held, and its guarded writes still work, until the holder releases it.
func TestRevokeReachesTheHolder(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	dir := testDir(t)
	sess := connect(t)
	m, _ := lock.NewMutex(sess, dir)
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := lock.NewMutex(connect(t), dir)
	h, err := other.Revoke(ctx)
	if err != nil || h.Token != l.Token() {
		t.Fatalf("Revoke = %+v, %v", h, err)
	}
	select {
	case <-l.Revoked():
	case <-ctx.Done():
		t.Fatal("the holder never saw the revocation request")
	}
	if err := l.Err(); err != nil {
		t.Fatalf("the lease ended on a request: %v", err)
	}
	if _, err := sess.GuardedSet(ctx, l.Fence(), dir+"-data", nil, -1); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		t.Fatalf("a guarded write after the request = %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Revoke(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Revoke of a free lock = %v", err)
	}
}

// Revocation works across Curator and Go in both directions, in Curator's
// layout.
func TestInteropCuratorRevocation(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	dir := testDir(t)
	cur := startCurator(t)
	sess := connect(t)
	chroot := sess.Config().Chroot

	// Curator holds a revocable lock; Go asks it to give it up.
	cur.send(t, "H holdrevocable "+chroot+dir)
	cur.mustExpect(t, ctx, "H", "held")
	m, _ := lock.NewMutex(sess, dir)
	if _, err := m.Revoke(ctx); err != nil {
		t.Fatal(err)
	}
	cur.mustExpect(t, ctx, "H", "revoked")
	cur.send(t, "H release")
	cur.mustExpect(t, ctx, "H", "released")

	// Go holds; Curator's Revoker asks it to give it up.
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cur.send(t, "R revoke "+chroot+l.Path())
	cur.mustExpect(t, ctx, "R", "revokesent")
	select {
	case <-l.Revoked():
	case <-ctx.Done():
		t.Fatal("the Go holder never saw Curator's revocation request")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
