package kerberos_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/kerberos"
	"github.com/zkcoord/zkcoord/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func connect(t *testing.T, cfg zkcoord.Config) *zkcoord.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := zkcoord.Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func nextState(t *testing.T, w <-chan zkcoord.StateChange) zkcoord.StateChange {
	t.Helper()
	select {
	case c := <-w:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no state change within 30s")
	}
	panic("unreachable")
}

// A Session authenticated with Kerberos against a real KDC is known to
// the server by its principal, reads a node only that principal may
// read, and is authenticated again on every connection: after its
// connection is cut and after the server restarts. A session without
// SASL is refused the node; a client whose keytab does not hold its
// principal's keys, or that asks for a server principal the realm does
// not know, fails at once with ErrAuthFailed.
func TestKerberos(t *testing.T) {
	kdc := zktest.StartKDC(t)
	c := zktest.Start(t, zktest.WithKerberos(kdc), zktest.WithQuorumMode())
	keytab, err := kdc.AddPrincipal("app")
	if err != nil {
		t.Fatal(err)
	}
	mech, err := kerberos.New(kerberos.Config{Principal: "app", Keytab: keytab, Krb5Conf: kdc.ConfigPath()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kerberos.New(kerberos.Config{Principal: "app", Keytab: keytab, Krb5Conf: kdc.ConfigPath(),
		ServerPrincipal: "zookeeper/localhost@ELSEWHERE"}); err == nil || !strings.Contains(err.Error(), "domain_realm") {
		t.Fatalf("a server principal in a realm krb5.conf does not map its host to: %v; want an error saying so", err)
	}
	principal := "app@" + kdc.Realm()
	if mech.Principal() != principal {
		t.Fatalf("Principal() = %q, want %q", mech.Principal(), principal)
	}
	p := c.NewProxy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := connect(t, zkcoord.Config{
		Servers:        p.Servers(),
		SessionTimeout: 20 * time.Second,
		SASL:           mech,
		ACL:            []zkcoord.ACL{{Scheme: "sasl", ID: principal, Perms: zkcoord.PermAll}},
	})
	ids, err := s.WhoAmI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, zkcoord.Identity{Scheme: "sasl", User: principal}) {
		t.Fatalf("WhoAmI = %+v, want sasl %s among them", ids, principal)
	}
	if _, err := s.Create(ctx, "/apps", []byte("x"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	readable := func(s *zkcoord.Session) error {
		_, _, err := s.Get(ctx, "/apps")
		return err
	}
	if err := readable(s); err != nil {
		t.Fatalf("the principal reads its node: %v", err)
	}
	anon := connect(t, zkcoord.Config{Servers: c.Servers()})
	if err := readable(anon); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("a session without SASL reads the node: %v; want ErrNoAuth", err)
	}

	w := s.Watch(ctx)
	if st := nextState(t, w).State; st != zkcoord.Connected {
		t.Fatalf("first state %v, want Connected", st)
	}
	reconnected := func(why string) {
		t.Helper()
		if st := nextState(t, w).State; st != zkcoord.Suspended {
			t.Fatalf("%s: state %v, want Suspended", why, st)
		}
		if ch := nextState(t, w); ch.State != zkcoord.Reconnected {
			t.Fatalf("%s: state %v (%v), want Reconnected", why, ch.State, ch.Err)
		}
		if err := readable(s); err != nil {
			t.Fatalf("%s: the principal reads its node: %v", why, err)
		}
	}
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	reconnected("after the connection was cut")
	if err := c.Server(0).Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Server(0).Start(); err != nil {
		t.Fatal(err)
	}
	reconnected("after the server restarted")

	other, err := kdc.AddPrincipal("other")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		cfg  kerberos.Config
		want string
	}{
		{"keytab of another principal", kerberos.Config{Principal: "app", Keytab: other, Krb5Conf: kdc.ConfigPath()}, "login"},
		{"unknown server principal", kerberos.Config{Principal: "app", Keytab: keytab, Krb5Conf: kdc.ConfigPath(),
			ServerPrincipal: "zookeeper/nowhere"}, "zookeeper/nowhere"},
	} {
		mech, err := kerberos.New(bad.cfg)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		s, err := zkcoord.Connect(cctx, zkcoord.Config{Servers: c.Servers(), SASL: mech})
		if err == nil {
			s.Close(cctx)
			t.Fatalf("%s: connected", bad.name)
		}
		if !errors.Is(err, zkcoord.ErrAuthFailed) || cctx.Err() != nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("%s: %v; want ErrAuthFailed mentioning %q at once", bad.name, err, bad.want)
		}
		t.Logf("%s: %v", bad.name, err)
		cancel()
	}
}
