package zkcoord_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/zktest"
)

// A Session authenticated with DIGEST-MD5 is known to the server as
// ("sasl", user), reads a node only that user may read, and is
// authenticated again on every connection: after its connection is cut
// and after the server restarts, the node stays readable. A session
// without SASL is refused the node.
func TestSASLDigest(t *testing.T) {
	c := zktest.Start(t, zktest.WithSASLDigest(map[string]string{"bob": "s3cret", "eve": "other"}), zktest.WithQuorumMode())
	p := c.NewProxy(t)
	ctx := testCtx(t, 2*time.Minute)
	s := connect(t, zkcoord.Config{
		Servers:        p.Servers(),
		SessionTimeout: 20 * time.Second,
		SASL:           zkcoord.DigestMD5{User: "bob", Password: "s3cret"},
		ACL:            []zkcoord.ACL{{Scheme: "sasl", ID: "bob", Perms: zkcoord.PermAll}},
	})
	ids, err := s.WhoAmI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, zkcoord.Identity{Scheme: "sasl", User: "bob"}) {
		t.Fatalf("WhoAmI = %+v, want sasl bob among them", ids)
	}
	if _, err := s.Create(ctx, "/bobs", []byte("x"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	readable := func(s *zkcoord.Session) error {
		data, _, err := s.Get(ctx, "/bobs")
		if err == nil && string(data) != "x" {
			return errors.New("read " + string(data) + ", want x")
		}
		return err
	}
	if err := readable(s); err != nil {
		t.Fatalf("bob reads his node: %v", err)
	}
	anon := connect(t, zkcoord.Config{Servers: c.Servers()})
	if err := readable(anon); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("a session without SASL reads bob's node: %v; want ErrNoAuth", err)
	}
	eve := connect(t, zkcoord.Config{Servers: c.Servers(), SASL: zkcoord.DigestMD5{User: "eve", Password: "other"}})
	if err := readable(eve); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("another SASL user reads bob's node: %v; want ErrNoAuth", err)
	}

	w := s.Watch(ctx)
	if st := nextState(t, w, time.Second).State; st != zkcoord.Connected {
		t.Fatalf("first state %v, want Connected", st)
	}
	reconnected := func(why string) {
		t.Helper()
		if st := nextState(t, w, 10*time.Second).State; st != zkcoord.Suspended {
			t.Fatalf("%s: state %v, want Suspended", why, st)
		}
		if ch := nextState(t, w, 30*time.Second); ch.State != zkcoord.Reconnected {
			t.Fatalf("%s: state %v (%v), want Reconnected", why, ch.State, ch.Err)
		}
		if err := readable(s); err != nil {
			t.Fatalf("%s: bob reads his node: %v", why, err)
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

	t.Run("wrong password", func(t *testing.T) {
		for _, m := range []zkcoord.DigestMD5{{User: "bob", Password: "wrong"}, {User: "nobody", Password: "nothing"}} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: c.Servers(), SASL: m})
			if err == nil {
				s.Close(ctx)
				t.Fatalf("%s with password %q: connected", m.User, m.Password)
			}
			if !errors.Is(err, zkcoord.ErrAuthFailed) || ctx.Err() != nil || !strings.Contains(err.Error(), "DIGEST-MD5") {
				t.Fatalf("%s with a wrong password: %v; want ErrAuthFailed naming DIGEST-MD5 at once", m.User, err)
			}
			cancel()
		}
	})
}

func TestSASLDigestWithoutUserIsInvalid(t *testing.T) {
	_, err := zkcoord.Connect(testCtx(t, 10*time.Second), zkcoord.Config{Servers: sharedServers(), SASL: zkcoord.DigestMD5{Password: "pw"}})
	if !errors.Is(err, zkcoord.ErrInvalidConfig) {
		t.Fatalf("Connect with DIGEST-MD5 without a user: %v; want ErrInvalidConfig", err)
	}
}

// A server without SASL answers the exchange with no challenge: Connect
// says so instead of trying again.
func TestSASLDigestWithoutServerSASL(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	_, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: sharedServers(), SASL: zkcoord.DigestMD5{User: "bob", Password: "pw"}})
	if !errors.Is(err, zkcoord.ErrAuthFailed) || !strings.Contains(err.Error(), "SASL enabled") || ctx.Err() != nil {
		t.Fatalf("Connect with SASL to a server without it: %v; want ErrAuthFailed asking whether SASL is enabled", err)
	}
}

// switchable is a SASL mechanism of the caller's own: DIGEST-MD5 with the
// password it holds when a connection opens.
type switchable struct{ password atomic.Value }

func (m *switchable) Mechanism() string { return "DIGEST-MD5" }

func (m *switchable) Start(ctx context.Context, server string) (zkcoord.SASLExchange, []byte, error) {
	return zkcoord.DigestMD5{User: "bob", Password: m.password.Load().(string)}.Start(ctx, server)
}

// Credentials refused on a reconnect end the Session at once, Closed with
// ErrAuthFailed and the server's refusal, instead of reconnecting again.
func TestSASLRefusedOnReconnectEndsSession(t *testing.T) {
	c := zktest.Start(t, zktest.WithSASLDigest(map[string]string{"bob": "pw"}))
	p := c.NewProxy(t)
	ctx := testCtx(t, time.Minute)
	mech := &switchable{}
	mech.password.Store("pw")
	s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: p.Servers(), SessionTimeout: 20 * time.Second, SASL: mech})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	w := s.Watch(ctx)
	if st := nextState(t, w, time.Second).State; st != zkcoord.Connected {
		t.Fatalf("first state %v, want Connected", st)
	}
	mech.password.Store("changed")
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if st := nextState(t, w, 10*time.Second).State; st != zkcoord.Suspended {
		t.Fatalf("state %v, want Suspended", st)
	}
	ch := nextState(t, w, 10*time.Second)
	if ch.State != zkcoord.Closed || !errors.Is(ch.Err, zkcoord.ErrAuthFailed) || !strings.Contains(ch.Err.Error(), "refused") {
		t.Fatalf("after a refused reconnect: %v (%v); want Closed with ErrAuthFailed saying the server refused", ch.State, ch.Err)
	}
	if _, _, err := s.Get(ctx, "/"); !errors.Is(err, zkcoord.ErrAuthFailed) {
		t.Fatalf("a call after the refusal: %v; want ErrAuthFailed", err)
	}
}
