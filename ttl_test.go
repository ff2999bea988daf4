package zkcoord_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// A server without extended types refuses TTL nodes with a clear error.
func TestCreateTTLDisabled(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	ctx := testCtx(t, 30*time.Second)
	_, err := s.CreateTTL(ctx, "/n", nil, zkcoord.FlagPersistent, time.Second)
	if !errors.Is(err, zkcoord.ErrTTLDisabled) {
		t.Fatalf("CreateTTL on a server without TTL nodes = %v, want ErrTTLDisabled", err)
	}
}

// The server deletes a TTL node once it went unchanged and childless for
// its TTL, and keeps one that has a child.
func TestCreateTTL(t *testing.T) {
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+
		" -Dzookeeper.extendedTypesEnabled=true -Dznode.container.checkIntervalMs=100"))
	c := zktest.Start(t)
	s := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 60*time.Second)
	for _, bad := range []int32{zkcoord.FlagEphemeral, zkcoord.FlagEphemeralSequential} {
		if _, err := s.CreateTTL(ctx, "/bad", nil, bad, time.Second); err == nil {
			t.Fatalf("CreateTTL with flags %d succeeded", bad)
		}
	}
	if _, err := s.CreateTTL(ctx, "/bad", nil, zkcoord.FlagPersistent, 0); !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("CreateTTL with TTL 0 = %v, want ErrInvalidConfig", err)
	}
	if _, err := s.CreateTTL(ctx, "/short", []byte("x"), zkcoord.FlagPersistent, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	seq, err := s.CreateTTL(ctx, "/kept-", nil, zkcoord.FlagSequence, 300*time.Millisecond)
	if err != nil || !strings.HasPrefix(seq, "/kept-") || len(seq) != len("/kept-")+10 {
		t.Fatalf("sequential CreateTTL = %q, %v", seq, err)
	}
	if _, err := s.Create(ctx, seq+"/child", nil, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "the server to delete the expired TTL node", func() bool {
		ok, _, err := s.Exists(ctx, "/short")
		return err == nil && !ok
	})
	if ok, _, err := s.Exists(ctx, seq); err != nil || !ok {
		t.Fatalf("a TTL node with a child was deleted: %v, %v", ok, err)
	}
}
