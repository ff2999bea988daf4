package zktest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/wait"
	"github.com/zkcoord/zkcoord/zktest/zkserver"
)

func TestStandalone(t *testing.T) {
	t.Parallel()
	c := Start(t)
	if c.Len() != 1 || len(c.Servers()) != 1 || c.ConnectString() != c.Servers()[0] {
		t.Fatalf("servers %v, connect string %q", c.Servers(), c.ConnectString())
	}
	if c.TickTime() != DefaultTickTime {
		t.Fatalf("tick time %v", c.TickTime())
	}
	s := c.Server(0)
	ctx := testCtx(t, 30*time.Second)

	if got, err := s.FourLetter(ctx, "ruok"); err != nil || got != "imok" {
		t.Fatalf("ruok = %q, %v", got, err)
	}
	srvr, err := s.Srvr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if srvr["Mode"] != "standalone" {
		t.Fatalf("Mode = %q, srvr %v", srvr["Mode"], srvr)
	}
	if l, err := c.Leader(); err != nil || l != 0 {
		t.Fatalf("Leader() = %d, %v", l, err)
	}

	cl := connectWith(t, c.Servers(), sessionTimeout, nil)
	if _, err := cl.Create("/w", []byte("x"), 0, openACL); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := cl.GetW("/w"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := cl.ChildrenW("/"); err != nil {
		t.Fatal(err)
	}

	mntr, err := s.Mntr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if mntr["zk_server_state"] != "standalone" {
		t.Fatalf("zk_server_state = %q", mntr["zk_server_state"])
	}
	if n, err := s.WatchCount(ctx); err != nil || n != 2 {
		t.Fatalf("WatchCount = %d, %v", n, err)
	}
	w, err := s.Wchc(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// wchc lists data watches (get, exists) only, not child watches.
	paths := w[cl.SessionID()]
	if len(w) != 1 || len(paths) != 1 || paths[0] != "/w" {
		t.Fatalf("Wchc = %v, session 0x%x", w, cl.SessionID())
	}
	cons, err := s.Cons(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cons, fmt.Sprintf("sid=0x%x", cl.SessionID())) {
		t.Fatalf("cons does not list session 0x%x:\n%s", cl.SessionID(), cons)
	}
}

func TestStopStartStandalone(t *testing.T) {
	t.Parallel()
	c := Start(t)
	s := c.Server(0)
	ctx := testCtx(t, 60*time.Second)

	cl := connectWith(t, c.Servers(), sessionTimeout, nil)
	if _, err := cl.Create("/persist", nil, 0, openACL); err != nil {
		t.Fatal(err)
	}
	// See WithQuorumMode for why no client is left reconnecting to a
	// restarting standalone server.
	cl.Close()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.Running() {
		t.Fatal("running after Stop")
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := s.FourLetter(ctx, "ruok"); err == nil {
		t.Fatal("stopped server answers")
	}
	if _, err := c.Leader(); err == nil {
		t.Fatal("Leader() succeeded with the only server stopped")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// Data survives a restart.
	cl2 := connectWith(t, c.Servers(), sessionTimeout, nil)
	if ok, _, err := cl2.Exists("/persist"); err != nil || !ok {
		t.Fatalf("Exists = %v, %v", ok, err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("Start of a running server succeeded")
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(); err != nil {
		t.Fatalf("second Kill: %v", err)
	}
}

func TestRestartQuorumOfOne(t *testing.T) {
	t.Parallel()
	c := Start(t, WithQuorumMode())
	s := c.Server(0)
	ctx := testCtx(t, 60*time.Second)
	m, err := s.Srvr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m["Mode"] != "leader" {
		t.Fatalf("Mode = %q, want leader", m["Mode"])
	}

	cl := connectWith(t, c.Servers(), sessionTimeout, nil)
	id := cl.SessionID()
	if _, err := cl.Create("/eph", nil, flagEphemeral, openACL); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	cl.waitState(t, stateDisconnected, 10*time.Second)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// The client gets its session back, ephemeral node included.
	cl.waitState(t, stateHasSession, 30*time.Second)
	if cl.SessionID() != id {
		t.Fatalf("session changed from 0x%x to 0x%x", id, cl.SessionID())
	}
	wait.For(t, 10*time.Second, "ephemeral node kept", func() error {
		ok, _, err := cl.Exists("/eph")
		if err == nil && !ok {
			err = errors.New("/eph missing")
		}
		return err
	})
}

func TestEnsembleLeaderFailover(t *testing.T) {
	t.Parallel()
	c := Start(t, WithServers(3))
	ctx := testCtx(t, 90*time.Second)
	if c.Len() != 3 || len(strings.Split(c.ConnectString(), ",")) != 3 {
		t.Fatalf("servers %v", c.Servers())
	}
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	followers := 0
	for i := 0; i < c.Len(); i++ {
		m, err := c.Server(i).Srvr(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m["Mode"] == "follower" {
			followers++
		}
	}
	if followers != 2 {
		t.Fatalf("%d followers, want 2", followers)
	}

	cl := connectWith(t, c.Servers(), sessionTimeout, nil)
	if _, err := cl.Create("/before", nil, 0, openACL); err != nil {
		t.Fatal(err)
	}

	if err := c.Server(leader).Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	newLeader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if newLeader == leader {
		t.Fatalf("leader still %d after killing it", leader)
	}

	if err := c.Server(leader).Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := c.Server(leader).Srvr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m["Mode"] != "follower" {
		t.Fatalf("restarted server mode %q, want follower", m["Mode"])
	}
	// The restarted server has the data written before it died.
	cl2 := connectWith(t, []string{c.Server(leader).Addr()}, sessionTimeout, nil)
	wait.For(t, 30*time.Second, "data on restarted server", func() error {
		ok, _, err := cl2.Exists("/before")
		if err == nil && !ok {
			err = errors.New("/before missing")
		}
		return err
	})
}

func TestEnsemblePauseResume(t *testing.T) {
	t.Parallel()
	c := Start(t, WithServers(3))
	ctx := testCtx(t, 90*time.Second)
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server(leader)
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	if !s.Paused() || !s.Running() {
		t.Fatalf("Paused() = %v, Running() = %v", s.Paused(), s.Running())
	}
	short := testCtx(t, 500*time.Millisecond)
	if _, err := s.FourLetter(short, "ruok"); err == nil {
		t.Fatal("paused server answered")
	}
	// The other two elect a new leader once they notice the silence.
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if l, err := c.Leader(); err != nil || l == leader {
		t.Fatalf("Leader() = %d, %v; old leader %d", l, err, leader)
	}

	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	if s.Paused() {
		t.Fatal("still paused")
	}
	// The old leader steps down and follows.
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "old leader follows", func() error {
		m, err := s.Srvr(ctx)
		if err != nil {
			return err
		}
		if m["Mode"] != "follower" {
			return fmt.Errorf("mode %q", m["Mode"])
		}
		return nil
	})
}

func TestExpireSession(t *testing.T) {
	t.Parallel()
	c := Start(t)
	ctx := testCtx(t, 60*time.Second)

	victim := connectWith(t, c.Servers(), sessionTimeout, nil)
	id, passwd := victim.rec.Session()
	if id == 0 || id != victim.SessionID() || len(passwd) == 0 {
		t.Fatalf("recorded session 0x%x (conn has 0x%x), password %d bytes", id, victim.SessionID(), len(passwd))
	}
	if _, err := victim.Create("/eph", nil, flagEphemeral, openACL); err != nil {
		t.Fatal(err)
	}
	observer := connectWith(t, c.Servers(), sessionTimeout, nil)
	if ok, _, err := observer.Exists("/eph"); err != nil || !ok {
		t.Fatalf("Exists = %v, %v", ok, err)
	}

	if err := c.ExpireSession(ctx, id, passwd); err != nil {
		t.Fatal(err)
	}
	// Closing the session deleted its ephemeral node, right away.
	if ok, _, err := observer.Exists("/eph"); err != nil || ok {
		t.Fatalf("after expiry Exists = %v, %v", ok, err)
	}
	victim.waitState(t, stateExpired, 30*time.Second)

	// The session is gone now.
	if err := c.ExpireSession(ctx, id, passwd); !errors.Is(err, ErrSessionGone) {
		t.Fatalf("second ExpireSession: %v, want ErrSessionGone", err)
	}
	// A wrong password is refused the same way.
	other := observer.rec
	oid, opw := other.Session()
	opw[0] ^= 0xff
	if err := c.ExpireSession(ctx, oid, opw); !errors.Is(err, ErrSessionGone) {
		t.Fatalf("ExpireSession with a wrong password: %v, want ErrSessionGone", err)
	}
	// ZooKeeper closes the session's current connection before checking
	// the password, so the observer reconnects, and keeps its session.
	observer.waitState(t, stateHasSession, 30*time.Second)
	if observer.SessionID() != oid {
		t.Fatalf("observer session changed from 0x%x to 0x%x", oid, observer.SessionID())
	}
	wait.For(t, 10*time.Second, "observer works", func() error {
		_, _, err := observer.Exists("/")
		return err
	})
}

func TestExpireSessionEnsemble(t *testing.T) {
	t.Parallel()
	c := Start(t, WithServers(3))
	ctx := testCtx(t, 60*time.Second)
	victim := connectWith(t, []string{c.Servers()[0]}, sessionTimeout, nil)
	if _, err := victim.Create("/eph", nil, flagEphemeral, openACL); err != nil {
		t.Fatal(err)
	}
	observer := connectWith(t, []string{c.Servers()[2]}, sessionTimeout, nil)
	id, passwd, err := victim.rec.WaitSession(ctx)
	if err != nil || id != victim.SessionID() {
		t.Fatalf("WaitSession = 0x%x, %v; conn has 0x%x", id, err, victim.SessionID())
	}
	if err := c.ExpireSession(ctx, id, passwd); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "ephemeral removed", func() error {
		ok, _, err := observer.Exists("/eph")
		if err == nil && ok {
			err = errors.New("/eph still exists")
		}
		return err
	})
	victim.waitState(t, stateExpired, 30*time.Second)
}

// stalled reports whether fn does not return within d; it returns a channel
// that receives fn's error once it does.
func stalled(fn func() error, d time.Duration) (bool, <-chan error) {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		done <- err
		return false, done
	case <-time.After(d):
		return true, done
	}
}

func TestProxyBlackhole(t *testing.T) {
	t.Parallel()
	c := Start(t)
	p := c.NewProxy(t)
	if len(p.Servers()) != 1 || p.Servers()[0] == c.Servers()[0] {
		t.Fatalf("proxy servers %v", p.Servers())
	}
	cl := connectWith(t, p.Servers(), sessionTimeout, nil)
	if _, err := cl.Create("/a", nil, 0, openACL); err != nil {
		t.Fatal(err)
	}
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	isStalled, done := stalled(func() error { _, _, err := cl.Get("/a"); return err }, time.Second)
	if !isStalled {
		t.Fatalf("request answered through a blackhole: %v", <-done)
	}
	// A raw connection through the proxy is accepted but gets no answer.
	conn, err := net.Dial("tcp", p.Servers()[0])
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("ruok"))
	conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := conn.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read through blackhole: %d bytes, %v", n, err)
	}
	conn.Close()

	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done: // failed with a closed connection, or answered late
	case <-time.After(20 * time.Second):
		t.Fatal("stalled request did not finish after Heal")
	}
	wait.For(t, 20*time.Second, "request after Heal", func() error {
		_, _, err := cl.Get("/a")
		return err
	})
}

func TestProxyCut(t *testing.T) {
	t.Parallel()
	c := Start(t)
	p := c.NewProxy(t)
	cl := connectWith(t, p.Servers(), sessionTimeout, nil)
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	cl.waitState(t, stateDisconnected, 10*time.Second)
	if _, err := net.DialTimeout("tcp", p.Servers()[0], time.Second); err == nil {
		t.Fatal("cut proxy accepts connections")
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	cl.waitState(t, stateHasSession, 20*time.Second)
	if _, _, err := cl.Exists("/"); err != nil {
		t.Fatal(err)
	}
}

func TestProxyDelay(t *testing.T) {
	t.Parallel()
	c := Start(t)
	p := c.NewProxy(t)
	cl := connectWith(t, p.Servers(), sessionTimeout, nil)
	const d = 200 * time.Millisecond
	if err := p.Delay(d); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, _, err := cl.Exists("/"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < d {
		t.Fatalf("request took %v with a %v delay", took, d)
	}
	// A second Delay replaces the first, and counts in microseconds (not
	// rounded down to no delay at all): every request now takes at least
	// twice 0.9ms.
	const fine = 900 * time.Microsecond
	if err := p.Delay(fine); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		start := time.Now()
		if _, _, err := cl.Exists("/"); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 2*fine {
			t.Fatalf("request took %v with a %v delay each way", took, fine)
		}
	}
	if err := p.Delay(d); err != nil {
		t.Fatal(err)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cl.Exists("/"); err != nil {
		t.Fatal(err)
	}
}

func TestProxyResetPeer(t *testing.T) {
	t.Parallel()
	c := Start(t)
	p := c.NewProxy(t)
	cl := connectWith(t, p.Servers(), sessionTimeout, nil)
	if err := p.ResetPeer(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cl.Exists("/"); err == nil {
		t.Fatal("request succeeded through reset_peer")
	}
	cl.waitState(t, stateDisconnected, 10*time.Second)

	// New connections are reset too.
	conn, err := net.Dial("tcp", p.Servers()[0])
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("ruok"))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 10)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read through reset_peer: %v", err)
	}
	conn.Close()

	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	cl.waitState(t, stateHasSession, 20*time.Second)
}

func TestProxyEnsemble(t *testing.T) {
	t.Parallel()
	c := Start(t, WithServers(3))
	p := c.NewProxy(t)
	if len(p.Servers()) != 3 {
		t.Fatalf("proxy servers %v", p.Servers())
	}
	for i, addr := range p.Servers() {
		ctx := testCtx(t, 10*time.Second)
		if got, err := zkserver.FourLetter(ctx, addr, "ruok"); err != nil || got != "imok" {
			t.Fatalf("ruok through proxy %d: %q, %v", i, got, err)
		}
	}
	cl := connectWith(t, p.Servers(), sessionTimeout, nil)
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	cl.waitState(t, stateDisconnected, 10*time.Second)
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	cl.waitState(t, stateHasSession, 20*time.Second)
}

func TestTLS(t *testing.T) {
	t.Parallel()
	c := Start(t, WithTLS())
	if len(c.SecureServers()) != 1 || c.SecureServers()[0] == c.Servers()[0] {
		t.Fatalf("secure servers %v", c.SecureServers())
	}
	cfg := c.ClientTLSConfig()
	rec := NewSessionRecorder(func(network, addr string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, addr, cfg)
	})
	cl := connectWith(t, c.SecureServers(), sessionTimeout, rec)
	if _, err := cl.Create("/tls", []byte("secure"), 0, openACL); err != nil {
		t.Fatal(err)
	}
	// The plain port still works and sees the node.
	plain := connectWith(t, c.Servers(), sessionTimeout, nil)
	if data, _, err := plain.Get("/tls"); err != nil || string(data) != "secure" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	// Expiry works for sessions made over TLS.
	id, pw := rec.Session()
	if err := c.ExpireSession(testCtx(t, 30*time.Second), id, pw); err != nil {
		t.Fatal(err)
	}
	cl.waitState(t, stateExpired, 30*time.Second)
}

func TestTickTime(t *testing.T) {
	t.Parallel()
	c := Start(t, WithTickTime(250*time.Millisecond))
	if c.TickTime() != 250*time.Millisecond || c.MinSessionTimeout() != 500*time.Millisecond {
		t.Fatalf("TickTime %v, MinSessionTimeout %v", c.TickTime(), c.MinSessionTimeout())
	}
	conf, err := c.Server(0).FourLetter(testCtx(t, 10*time.Second), "conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tickTime=250", "minSessionTimeout=500", "maxSessionTimeout=60000"} {
		if !strings.Contains(conf, want) {
			t.Errorf("conf lacks %q:\n%s", want, conf)
		}
	}
}

func TestFiveServers(t *testing.T) {
	t.Parallel()
	c := Start(t, WithServers(5))
	ctx := testCtx(t, 90*time.Second)
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	// Two of five may fail, the leader among them.
	other := (leader + 1) % c.Len()
	if err := c.Server(leader).Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Server(other).Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	cl := connectWith(t, c.Servers(), sessionTimeout, nil)
	if _, err := cl.Create("/five", nil, 0, openACL); err != nil {
		t.Fatal(err)
	}
	// A third failure loses the quorum: the rest stop serving.
	third := (leader + 2) % c.Len()
	if err := c.Server(third).Kill(); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "no quorum", func() error {
		for i := 0; i < c.Len(); i++ {
			s := c.Server(i)
			if !s.Running() {
				continue
			}
			if _, err := s.Srvr(ctx); !errors.Is(err, ErrNotServing) {
				return fmt.Errorf("server %d: srvr error %v, want ErrNotServing", i, err)
			}
		}
		return nil
	})
	if err := c.Server(third).Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
}
