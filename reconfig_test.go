package zkcoord_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

func TestParseEnsembleConfig(t *testing.T) {
	text := "server.1=10.0.0.1:2888:3888:participant;10.0.0.1:2181\n" +
		"server.2=zk-1.zk-hs:2888:3888:observer;0.0.0.0:2181\n" +
		"server.3=[::1]:2888:3888;2182\n" +
		"server.4=zk-3:2888:3888\n" +
		"version=10000000a"
	cfg, err := zkcoord.ParseEnsembleConfig(text)
	if err != nil {
		t.Fatal(err)
	}
	want := zkcoord.EnsembleConfig{Version: 0x10000000a, Members: []zkcoord.EnsembleMember{
		{ID: 1, Role: "participant", QuorumAddr: "10.0.0.1:2888", ElectionAddr: "10.0.0.1:3888", ClientAddr: "10.0.0.1:2181"},
		{ID: 2, Role: "observer", QuorumAddr: "zk-1.zk-hs:2888", ElectionAddr: "zk-1.zk-hs:3888", ClientAddr: "zk-1.zk-hs:2181"},
		{ID: 3, Role: "participant", QuorumAddr: "[::1]:2888", ElectionAddr: "[::1]:3888", ClientAddr: "[::1]:2182"},
		{ID: 4, Role: "participant", QuorumAddr: "zk-3:2888", ElectionAddr: "zk-3:3888"},
	}}
	if cfg.Version != want.Version || !slices.Equal(cfg.Members, want.Members) {
		t.Fatalf("parsed\n%+v\nwant\n%+v", cfg, want)
	}
	if got := cfg.Servers(); got != nil {
		t.Fatalf("Servers() with a member without a client port = %v, want nil", got)
	}
	three := zkcoord.EnsembleConfig{Version: cfg.Version, Members: cfg.Members[:3]}
	if got, want := three.Servers(), []string{"10.0.0.1:2181", "zk-1.zk-hs:2181", "[::1]:2182"}; !slices.Equal(got, want) {
		t.Fatalf("Servers() = %v, want %v", got, want)
	}
	again, err := zkcoord.ParseEnsembleConfig(three.String())
	if err != nil || again.Version != three.Version || !slices.Equal(again.Members, three.Members) {
		t.Fatalf("String() does not parse back: %q: %+v, %v", three.String(), again, err)
	}
	if cfg, err := zkcoord.ParseEnsembleConfig(""); err != nil || len(cfg.Members) != 0 {
		t.Fatalf("a standalone server's empty config: %+v, %v", cfg, err)
	}
	for _, bad := range []string{
		"server.x=h:1:2",
		"server.1=h:1",
		"server.1=h:1:2:leader",
		"server.1=h:1:2;h:port",
		"server.1=[::1:1:2",
		"server.1=[zk]:1:2",
		"server.0=0]:1:1",
		"version=zz",
	} {
		if _, err := zkcoord.ParseEnsembleConfig(bad); !errors.Is(err, zkcoord.ErrBadData) {
			t.Errorf("ParseEnsembleConfig(%q) = %v, want ErrBadData", bad, err)
		}
	}
}

// A Session learns the membership from a one-server connect string, takes
// in a server that joins, and moves off the server it is connected to when
// that one is removed, all in the same session; one pinned or behind a
// proxy keeps its servers.
func TestSessionFollowsReconfiguration(t *testing.T) {
	c := zktest.Start(t, zktest.WithServers(3), zktest.WithReconfig())
	ctx := testCtx(t, 90*time.Second)
	logs := &logRecords{}
	sess := connect(t, zkcoord.Config{
		Servers:        c.Servers()[:1],
		SessionTimeout: testkit.SessionTimeout,
		Chroot:         "/app", // the configuration node lies outside it
		Logger:         slog.New(logs),
	})
	pinned := connect(t, zkcoord.Config{Servers: c.Servers()[1:2], SessionTimeout: testkit.SessionTimeout, PinServers: true})
	proxy := c.NewProxy(t)
	proxied := connect(t, zkcoord.Config{Servers: proxy.Servers(), SessionTimeout: testkit.SessionTimeout})
	admin := connect(t, zkcoord.Config{Servers: c.Servers(), SessionTimeout: testkit.SessionTimeout, PinServers: true,
		Auth: []zkcoord.Auth{{Scheme: "digest", Credential: zktest.SuperAuth}}})
	id := sess.ID()
	states := sess.Watch(ctx)
	nextState(t, states, time.Second) // Connected

	members := func(want []string) func() bool {
		return func() bool { return sameSet(sess.Servers(), want) }
	}
	testkit.Eventually(t, 20*time.Second, "the Session to learn the three members", members(c.Servers()))
	if sess.Server() != c.Servers()[0] {
		t.Fatalf("the Session moved from %s to %s although its server stayed a member", c.Servers()[0], sess.Server())
	}

	// A Session that reached server 0 by a host name recognises it among
	// the members by address, and keeps its name and its connection.
	_, port, _ := net.SplitHostPort(c.Servers()[0])
	byName := net.JoinHostPort("localhost", port)
	named := connect(t, zkcoord.Config{Servers: []string{byName}, SessionTimeout: testkit.SessionTimeout})
	testkit.Eventually(t, 20*time.Second, "the Session connected by name to learn the members", func() bool {
		return sameSet(named.Servers(), append([]string{byName}, c.Servers()[1:]...))
	})
	if named.Server() != byName || named.State() != zkcoord.Connected {
		t.Fatalf("the Session connected by name is on %s, %v", named.Server(), named.State())
	}

	added, err := c.AddServer(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "the Session to take in the fourth server", members(c.Servers()))

	cfg, err := admin.EnsembleConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Members) != 4 || cfg.Members[3].ClientAddr != added.Addr() {
		t.Fatalf("ensemble config after the join: %v", cfg)
	}
	if _, err := admin.Reconfig(ctx, zkcoord.Reconfig{Leaving: []int64{1}, FromVersion: cfg.Version - 1}); !errors.Is(err, zkcoord.ErrBadVersion) {
		t.Fatalf("reconfig from a stale version: %v, want ErrBadVersion", err)
	}
	if _, err := sess.Reconfig(ctx, zkcoord.Reconfig{Leaving: []int64{1}}); !errors.Is(err, zkcoord.ErrNoAuth) {
		t.Fatalf("reconfig without the super user: %v, want ErrNoAuth", err)
	}
	if _, err := admin.Reconfig(ctx, zkcoord.Reconfig{Joining: []string{"server.9=nonsense"}}); !errors.Is(err, zkcoord.ErrBadArguments) {
		t.Fatalf("reconfig with a bad server line: %v, want ErrBadArguments", err)
	}

	// Remove the server the Session is connected to (server.1).
	after, err := admin.Reconfig(ctx, zkcoord.Reconfig{Leaving: []int64{1}, FromVersion: cfg.Version})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Members) != 3 || after.Version <= cfg.Version {
		t.Fatalf("ensemble config after the removal: %v", after)
	}
	if err := c.Server(0).Stop(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the Session to drop the removed server", members(c.Servers()[1:]))
	testkit.Eventually(t, 30*time.Second, "the Session to reconnect to a member", func() bool {
		return slices.Contains(c.Servers()[1:], sess.Server()) && sess.State() == zkcoord.Reconnected
	})
	if sess.ID() != id || sess.Err() != nil {
		t.Fatalf("session 0x%x is now 0x%x, err %v", id, sess.ID(), sess.Err())
	}
	if _, _, err := sess.Exists(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if !logs.has(slog.LevelInfo, "membership changed") {
		t.Error("no info log of the membership change")
	}

	if got := pinned.Servers(); !slices.Equal(got, c.Servers()[1:2]) {
		t.Errorf("a pinned Session's servers became %v", got)
	}
	if got := proxied.Servers(); !sameSet(got, proxy.Servers()) {
		t.Errorf("a Session behind proxies took servers %v", got)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Supervise opens its next Session on the servers the last one learned,
// so it finds the ensemble again when the only server it was given has
// been removed.
func TestSuperviseReconnectsToLearnedServers(t *testing.T) {
	c := zktest.Start(t, zktest.WithServers(3), zktest.WithReconfig())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	sessions := make(chan *zkcoord.Session, 2)
	done := make(chan error, 1)
	go func() {
		cfg := zkcoord.Config{Servers: c.Servers()[:1], SessionTimeout: testkit.SessionTimeout}
		done <- zkcoord.Supervise(ctx, cfg, func(ctx context.Context, sess *zkcoord.Session) error {
			sessions <- sess
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	var first *zkcoord.Session
	select {
	case first = <-sessions:
	case <-ctx.Done():
		t.Fatal("no first Session")
	}
	testkit.Eventually(t, 20*time.Second, "the Session to learn the members", func() bool {
		return sameSet(first.Servers(), c.Servers())
	})
	if err := c.RemoveServer(ctx, 0); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the Session to follow the removal", func() bool {
		return sameSet(first.Servers(), c.Servers()[1:]) && slices.Contains(c.Servers()[1:], first.Server())
	})
	if err := c.ExpireSession(ctx, first.ID(), first.Password()); err != nil {
		t.Fatal(err)
	}
	select {
	case second := <-sessions:
		if second.ID() == first.ID() || !slices.Contains(c.Servers()[1:], second.Server()) {
			t.Fatalf("second Session 0x%x on %s (first 0x%x)", second.ID(), second.Server(), first.ID())
		}
	case err := <-done:
		t.Fatalf("Supervise returned %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("no second Session on the remaining members")
	}
}

// Any text parses or fails with ErrBadData, never panics, and what parses
// reads back the same from its String.
func FuzzParseEnsembleConfig(f *testing.F) {
	f.Add("server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nversion=100000000")
	f.Add("server.2=[::1]:1:2:observer;0.0.0.0:3\nserver.3=h:1:2")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := zkcoord.ParseEnsembleConfig(text)
		if err != nil {
			if !errors.Is(err, zkcoord.ErrBadData) {
				t.Fatalf("error %v does not wrap ErrBadData", err)
			}
			return
		}
		again, err := zkcoord.ParseEnsembleConfig(cfg.String())
		if err != nil || again.Version != cfg.Version || !slices.Equal(again.Members, cfg.Members) {
			t.Fatalf("%q parsed to %+v, whose String %q reads back as %+v, %v", text, cfg, cfg.String(), again, err)
		}
	})
}
