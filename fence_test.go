package zkcoord_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// TestGuardRefusesRecreatedNode: a fence on a fixed-name node (a barrier,
// or any node passed to FenceOf) no longer holds once the node was deleted
// and re-created by another session, although the new node has the fenced
// version again: the stale owner's guarded write is refused.
func TestGuardRefusesRecreatedNode(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	cfg := zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)}
	owner, successor := connect(t, cfg), connect(t, cfg)
	if _, err := owner.Create(ctx, "/target", []byte("initial"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create(ctx, "/barrier", []byte("owner"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	fence, err := owner.FenceOf(ctx, "/barrier")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.GuardedSet(ctx, fence, "/target", []byte("owner"), -1); err != nil {
		t.Fatalf("guarded write while the fence holds: %v", err)
	}
	// Someone deletes the owner's node and a successor creates its own,
	// at version 0 like the fenced one.
	if err := successor.Delete(ctx, "/barrier", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := successor.Create(ctx, "/barrier", []byte("successor"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.GuardedSet(ctx, fence, "/target", []byte("stale"), -1); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Fatalf("guarded write on a re-created node: %v, want ErrNotOwner", err)
	}
	data, _, err := owner.Get(ctx, "/target")
	if err != nil || string(data) != "owner" {
		t.Fatalf("target holds %q (%v), want the owner's write only", data, err)
	}
	// The successor's own fence holds.
	f2, err := successor.FenceOf(ctx, "/barrier")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := successor.GuardedSet(ctx, f2, "/target", []byte("successor"), -1); err != nil {
		t.Fatal(err)
	}
}

// A fence's Check makes a caller's own transaction conditional on the
// ownership; an empty operation is refused before anything is sent.
func TestFenceCheckInOwnTransaction(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	ctx := testCtx(t, 30*time.Second)
	owner, err := s.Create(ctx, "/owner-", nil, zkcoord.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.FenceOf(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Multi(ctx, f.Check(), zkcoord.CreateOp("/written", nil, zkcoord.FlagPersistent)); err != nil {
		t.Fatalf("a transaction under a held fence: %v", err)
	}
	if err := s.Delete(ctx, owner, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Multi(ctx, f.Check(), zkcoord.CreateOp("/stale", nil, zkcoord.FlagPersistent)); err == nil {
		t.Fatal("a transaction under a lost fence succeeded")
	}
	if ok, _, _ := s.Exists(ctx, "/stale"); ok {
		t.Fatal("the stale transaction wrote")
	}
	if _, err := s.Multi(ctx, zkcoord.Op{}); err == nil {
		t.Fatal("an empty operation was accepted")
	}
}
