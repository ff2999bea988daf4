package zkcoord_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// MultiRead answers several reads in one request, each on its own, the
// chroot applied.
func TestMultiRead(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t)})
	ctx := testCtx(t, 30*time.Second)
	if _, err := s.Create(ctx, "/a", []byte("va"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/a/x", nil, 0); err != nil {
		t.Fatal(err)
	}
	res, err := s.MultiRead(ctx, zkcoord.GetOp("/a"), zkcoord.ChildrenOp("/a"), zkcoord.GetOp("/missing"))
	if err != nil {
		t.Fatal(err)
	}
	if string(res[0].Data) != "va" || res[0].Stat == nil || res[0].Stat.NumChildren != 1 || res[0].Err != nil {
		t.Errorf("get /a: %+v", res[0])
	}
	if !slices.Equal(res[1].Children, []string{"x"}) || res[1].Err != nil {
		t.Errorf("children /a: %+v", res[1])
	}
	if !errors.Is(res[2].Err, zkcoord.ErrNoNode) {
		t.Errorf("get /missing: %+v, want ErrNoNode", res[2])
	}
	if _, err := s.MultiRead(ctx, zkcoord.ReadOp{}); err == nil {
		t.Error("an empty ReadOp was accepted")
	}
}

// CreateWithStat returns the node's Stat from the create's own reply.
func TestCreateWithStat(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers()})
	ctx := testCtx(t, 30*time.Second)
	p, st, err := s.CreateWithStat(ctx, "/withstat-", []byte("abc"), zkcoord.FlagEphemeralSequential)
	if err != nil {
		t.Fatal(err)
	}
	_, read, err := s.Get(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if *st != *read || st.DataLength != 3 || st.EphemeralOwner != s.ID() {
		t.Fatalf("CreateWithStat's stat %+v, read back %+v", st, read)
	}
}

// FourLetter asks the server, and refuses what is not a four-letter word.
func TestFourLetter(t *testing.T) {
	s := connect(t, zkcoord.Config{Servers: sharedServers()})
	ctx := testCtx(t, 30*time.Second)
	out, err := s.FourLetter(ctx, "", "srvr")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Zookeeper version") {
		t.Fatalf("srvr answered %q", out)
	}
	if _, err := s.FourLetter(ctx, "", "kill\n"); err == nil {
		t.Fatal("a word with a newline was sent")
	}
}

// Config.ACLFor chooses each created node's ACL by its path; GetACL and
// SetACL read and replace it.
func TestACLForPath(t *testing.T) {
	readOnly := zkcoord.WorldACL(zkcoord.PermRead | zkcoord.PermAdmin)
	s := connect(t, zkcoord.Config{Servers: sharedServers(), Chroot: testkit.Chroot(t),
		ACLFor: func(p string) []zkcoord.ACL {
			if strings.HasPrefix(p, "/ro") {
				return readOnly
			}
			return nil
		}})
	ctx := testCtx(t, 30*time.Second)
	for _, p := range []string{"/ro", "/rw"} {
		if _, err := s.Create(ctx, p, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	acl, st, err := s.GetACL(ctx, "/ro")
	if err != nil || !slices.Equal(acl, readOnly) {
		t.Fatalf("GetACL(/ro) = %+v, %v; want %+v", acl, err, readOnly)
	}
	if _, err := s.Set(ctx, "/ro", []byte("x"), -1); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("writing a read-only node: %v, want ErrNoAuth", err)
	}
	if acl, _, err := s.GetACL(ctx, "/rw"); err != nil || !slices.Equal(acl, zkcoord.WorldACL(zkcoord.PermAll)) {
		t.Fatalf("GetACL(/rw) = %+v, %v; want the default", acl, err)
	}
	if _, err := s.SetACL(ctx, "/ro", zkcoord.WorldACL(zkcoord.PermAll), st.Aversion); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set(ctx, "/ro", []byte("x"), -1); err != nil {
		t.Fatalf("writing after SetACL: %v", err)
	}
	if _, err := s.SetACL(ctx, "/ro", readOnly, st.Aversion); !errors.Is(err, zkcoord.ErrBadVersion) {
		t.Fatalf("SetACL at an old ACL version: %v, want ErrBadVersion", err)
	}
}
