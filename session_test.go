package zkcoord_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/zktest"
)

func TestConfigValidation(t *testing.T) {
	ctx := testCtx(t, 5*time.Second)
	bad := []zkcoord.Config{
		{},
		{Servers: []string{"no-port"}},
		{Servers: []string{"127.0.0.1:1"}, LostAfter: 1.5},
		{Servers: []string{"127.0.0.1:1"}, Chroot: "relative"},
		{Servers: []string{"127.0.0.1:1"}, Chroot: "/a//b"},
		{Servers: []string{"127.0.0.1:1"}, SessionTimeout: time.Millisecond},
		{Servers: []string{"127.0.0.1:1"}, SessionTimeout: time.Second, LostAfter: 0.05}, // Lost after 50ms
		{Servers: []string{"127.0.0.1:1"}, Auth: []zkcoord.Auth{{Scheme: "digest", Credential: "nocolon"}}},
	}
	for _, cfg := range bad {
		if _, err := zkcoord.Connect(ctx, cfg); !errors.Is(err, zkcoord.ErrInvalidConfig) {
			t.Errorf("Connect(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func TestConnectUnreachableRespectsContext(t *testing.T) {
	ctx := testCtx(t, 500*time.Millisecond)
	_, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: []string{"127.0.0.1:1"}})
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("Connect to a closed port = %v, want a deadline error", err)
	}
}

func TestOperationsAndWatches(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 30*time.Second)

	if err := s.EnsurePath(ctx, "/ops/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsurePath(ctx, "/ops/a/b"); err != nil {
		t.Fatalf("EnsurePath is not idempotent: %v", err)
	}
	data, _, w, err := s.GetW(ctx, "/ops/a/b")
	if err != nil || len(data) != 0 {
		t.Fatalf("GetW = %q, %v", data, err)
	}
	if _, err := s.Set(ctx, "/ops/a/b", []byte("v1"), 0); err != nil {
		t.Fatal(err)
	}
	ev := <-w
	if ev.Type != zkcoord.EventNodeDataChanged || ev.Path != "/ops/a/b" {
		t.Fatalf("watch event = %+v", ev)
	}
	if _, err := s.Set(ctx, "/ops/a/b", []byte("v2"), 0); !errors.Is(err, zkcoord.ErrBadVersion) {
		t.Fatalf("Set with a stale version = %v, want ErrBadVersion", err)
	}
	if _, err := s.Set(ctx, "/ops/a/b", make([]byte, zkcoord.DefaultMaxDataSize+1), -1); !errors.Is(err, zkcoord.ErrTooLarge) {
		t.Fatalf("oversized Set = %v, want ErrTooLarge", err)
	}
	if _, _, err := s.Get(ctx, "ops/relative"); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("Get of a relative path = %v, want ErrInvalidPath", err)
	}
	if _, err := s.Create(ctx, "/ops/trailing/", nil, 0); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("Create with a trailing slash = %v, want ErrInvalidPath", err)
	}
	if err := s.Delete(ctx, "/ops/missing", -1); !errors.Is(err, zkcoord.ErrNoNode) {
		t.Fatalf("Delete of a missing node = %v, want ErrNoNode", err)
	}
	res, err := s.Multi(ctx, zkcoord.CreateOp("/ops/m", []byte("x"), 0), zkcoord.SetOp("/ops/a/b", []byte("v3"), 1))
	if err != nil || res[0].String != "/ops/m" {
		t.Fatalf("Multi = %+v, %v", res, err)
	}
}

func TestChroot(t *testing.T) {
	c := zktest.Start(t)
	plain := connect(t, zkcoord.Config{Servers: c.Servers()})
	rooted := connect(t, zkcoord.Config{Servers: c.Servers(), Chroot: "/tenant/app"})
	ctx := testCtx(t, 30*time.Second)

	// Connect created the chroot.
	if ok, _, err := plain.Exists(ctx, "/tenant/app"); err != nil || !ok {
		t.Fatalf("chroot not created: %v %v", ok, err)
	}
	p, err := rooted.Create(ctx, "/seq-", []byte("x"), zkcoord.FlagSequence)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p, "/seq-") {
		t.Fatalf("Create returned %q: the chroot leaked into the path", p)
	}
	if ok, _, _ := plain.Exists(ctx, "/tenant/app"+p); !ok {
		t.Fatalf("node %s is not under the chroot", p)
	}
	kids, _, w, err := rooted.ChildrenW(ctx, "/")
	if err != nil || !slices.Contains(kids, strings.TrimPrefix(p, "/")) {
		t.Fatalf("ChildrenW(/) = %v, %v", kids, err)
	}
	if _, err := plain.Create(ctx, "/tenant/app/other", nil, 0); err != nil {
		t.Fatal(err)
	}
	if ev := <-w; ev.Path != "/" || ev.Type != zkcoord.EventNodeChildrenChanged {
		t.Fatalf("child watch event %+v: want path / after chroot is stripped", ev)
	}
	_, _, dw, err := rooted.ExistsW(ctx, "/later")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Create(ctx, "/tenant/app/later", nil, 0); err != nil {
		t.Fatal(err)
	}
	if ev := <-dw; ev.Path != "/later" || ev.Type != zkcoord.EventNodeCreated {
		t.Fatalf("exists watch event %+v", ev)
	}
	res, err := rooted.Multi(ctx, zkcoord.CreateOp("/multi-", nil, zkcoord.FlagSequence))
	if err != nil || !strings.HasPrefix(res[0].String, "/multi-") {
		t.Fatalf("Multi under chroot = %+v, %v", res, err)
	}
}

// With ChrootMustExist, Connect reports a missing chroot, naming it, and
// creates nothing; an existing one is used as usual.
func TestChrootMustExist(t *testing.T) {
	c := zktest.Start(t)
	plain := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 30*time.Second)
	_, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: c.Servers(), Chroot: "/absent/app", ChrootMustExist: true})
	if !errors.Is(err, zkcoord.ErrNoNode) || !strings.Contains(err.Error(), "/absent/app") {
		t.Fatalf("Connect with a missing chroot = %v, want ErrNoNode naming it", err)
	}
	if ok, _, err := plain.Exists(ctx, "/absent"); err != nil || ok {
		t.Fatalf("the missing chroot's parent: exists %v, %v", ok, err)
	}
	if err := plain.EnsurePath(ctx, "/present/app"); err != nil {
		t.Fatal(err)
	}
	rooted := connect(t, zkcoord.Config{Servers: c.Servers(), Chroot: "/present/app", ChrootMustExist: true})
	if _, err := rooted.Create(ctx, "/x", nil, 0); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := plain.Exists(ctx, "/present/app/x"); err != nil || !ok {
		t.Fatalf("node not under the chroot: %v %v", ok, err)
	}
}

func TestDigestACL(t *testing.T) {
	c := zktest.Start(t)
	ctx := testCtx(t, 30*time.Second)
	acl := zkcoord.DigestACL(zkcoord.PermAll, "alice", "secret")
	alice := connect(t, zkcoord.Config{
		Servers: c.Servers(),
		Auth:    []zkcoord.Auth{{Scheme: "digest", Credential: "alice:secret"}},
		ACL:     acl,
	})
	if _, err := alice.Create(ctx, "/private", []byte("mine"), 0); err != nil {
		t.Fatal(err)
	}
	stranger := connect(t, zkcoord.Config{Servers: c.Servers()})
	if _, _, err := stranger.Get(ctx, "/private"); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("unauthenticated Get = %v, want ErrNoAuth", err)
	}
	mallory := connect(t, zkcoord.Config{Servers: c.Servers(), Auth: []zkcoord.Auth{{Scheme: "digest", Credential: "alice:guess"}}})
	if _, err := mallory.Set(ctx, "/private", []byte("x"), -1); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("Set with a wrong password = %v, want ErrNoAuth", err)
	}
	again := connect(t, zkcoord.Config{Servers: c.Servers(), Auth: []zkcoord.Auth{{Scheme: "digest", Credential: "alice:secret"}}})
	if data, _, err := again.Get(ctx, "/private"); err != nil || string(data) != "mine" {
		t.Fatalf("Get with the right identity = %q, %v", data, err)
	}
}

func TestTLS(t *testing.T) {
	c := zktest.Start(t, zktest.WithTLS())
	s := connect(t, zkcoord.Config{Servers: c.SecureServers(), TLS: c.ClientTLSConfig()})
	ctx := testCtx(t, 30*time.Second)
	if _, err := s.Create(ctx, "/over-tls", []byte("x"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	// A client that does not trust the server's CA is refused.
	bad := c.ClientTLSConfig()
	bad.RootCAs = nil
	short := testCtx(t, 2*time.Second)
	if _, err := zkcoord.Connect(short, zkcoord.Config{Servers: c.SecureServers(), TLS: bad}); err == nil {
		t.Fatal("Connect with an untrusted certificate succeeded")
	}
}
