package zkserver

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/wait"
)

// These tests put the proxy in front of a plain TCP server, so that what
// each end sends and receives can be checked byte by byte. The tests in
// zktest/zktest_test.go run it in front of ZooKeeper.

// upstream is a TCP server behind a proxy. It echoes what it reads when
// echo is set; otherwise it hands each connection it accepts to the test.
type upstream struct {
	ln       net.Listener
	accepted chan net.Conn
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

func startUpstream(t testing.TB, echo bool) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{ln: ln, accepted: make(chan net.Conn, 100)}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns = append(u.conns, c)
			u.mu.Unlock()
			if !echo {
				u.accepted <- c
				continue
			}
			u.wg.Add(1)
			go func() {
				defer u.wg.Done()
				io.Copy(c, c)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		u.mu.Lock()
		for _, c := range u.conns {
			c.Close()
		}
		u.mu.Unlock()
		u.wg.Wait()
	})
	return u
}

func (u *upstream) addr() string { return u.ln.Addr().String() }

// next returns the next connection the upstream accepted.
func (u *upstream) next(t testing.TB) net.Conn {
	t.Helper()
	select {
	case c := <-u.accepted:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream accepted no connection")
		return nil
	}
}

func startProxy(t testing.TB, upstreams ...string) *Proxy {
	t.Helper()
	p, err := OpenProxy(upstreams)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes msg on c and reads it back from an echo upstream.
func roundTrip(t testing.TB, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != msg {
		t.Fatalf("echo of %q: %q, %v", msg, got, err)
	}
}

// readEnd reads c until it ends and returns what came before the end and
// the error that ended it (io.EOF for a clean close).
func readEnd(t *testing.T, c net.Conn) (string, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	buf := make([]byte, 1024)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("connection still open after 10s (read %q)", got)
			}
			return string(got), err
		}
	}
}

// Every chunk reaches the other end no sooner than the delay after it was
// sent, however short the delay, and not much later: a round trip through
// an echo server takes at least twice the delay, and its median stays
// within a few milliseconds of that.
func TestProxyDelayPrecision(t *testing.T) {
	u := startUpstream(t, true)
	p := startProxy(t, u.addr())
	c := dial(t, p.Servers()[0])
	roundTrip(t, c, "warm")
	for _, d := range []time.Duration{250 * time.Microsecond, time.Millisecond, 7 * time.Millisecond} {
		if err := p.Delay(d); err != nil {
			t.Fatal(err)
		}
		const n = 50
		var took []time.Duration
		for range n {
			start := time.Now()
			roundTrip(t, c, "ping")
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		if took[0] < 2*d {
			t.Fatalf("Delay(%v): a round trip took %v, less than twice the delay", d, took[0])
		}
		// Generous: the machine may be busy.
		if median := took[n/2]; median > 2*d+5*time.Millisecond {
			t.Errorf("Delay(%v): median round trip %v", d, median)
		}
		t.Logf("Delay(%v): round trip min %v, median %v, max %v", d, took[0], took[n/2], took[n-1])
	}
}

// Chunks in flight do not add up their delays: each is passed on the delay
// after it was read, not the delay after the one before it.
func TestProxyDelayDoesNotAddUp(t *testing.T) {
	u := startUpstream(t, false)
	p := startProxy(t, u.addr())
	c := dial(t, p.Servers()[0])
	s := u.next(t)
	const d = 100 * time.Millisecond
	if err := p.Delay(d); err != nil {
		t.Fatal(err)
	}
	const chunks = 10
	start := time.Now()
	go func() {
		// Spaced a little, so that the proxy reads them one by one.
		for range chunks {
			c.Write([]byte{'x'})
			time.Sleep(2 * time.Millisecond)
		}
	}()
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(s, make([]byte, chunks)); err != nil {
		t.Fatal(err)
	}
	// Added up, the delays would make it chunks*d.
	if took := time.Since(start); took < d || took > chunks*d/2 {
		t.Fatalf("%d chunks sent over %v arrived after %v with a delay of %v",
			chunks, chunks*2*time.Millisecond, took, d)
	}
}

// A new Delay applies to the chunks already waiting out the old one.
func TestProxyDelayReplaced(t *testing.T) {
	u := startUpstream(t, true)
	p := startProxy(t, u.addr())
	c := dial(t, p.Servers()[0])
	if err := p.Delay(time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if err := p.Delay(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
		t.Fatalf("the chunk held by the first delay: %v", err)
	}
}

// A blackhole delivers nothing either way, on open and new connections,
// which are still accepted; Heal closes them (and only them), and new
// connections work again.
func TestProxyBlackholeDropsAndHealCloses(t *testing.T) {
	u := startUpstream(t, false)
	p := startProxy(t, u.addr())
	before := dial(t, p.Servers()[0])
	beforeS := u.next(t)
	if _, err := before.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(beforeS, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}

	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	before.Write([]byte("lost"))
	beforeS.Write([]byte("lost"))
	during := dial(t, p.Servers()[0]) // accepted
	duringS := u.next(t)
	during.Write([]byte("lost"))
	duringS.Write([]byte("lost"))

	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]net.Conn{
		"client open before": before, "server open before": beforeS,
		"client opened during": during, "server opened during": duringS,
	} {
		// Closed, or reset when the proxy had not read all that was
		// sent to it.
		if got, err := readEnd(t, c); got != "" {
			t.Errorf("%s: received %q through a blackhole (then %v)", name, got, err)
		}
	}

	after := dial(t, p.Servers()[0])
	afterS := u.next(t)
	if _, err := after.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	afterS.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(afterS, make([]byte, 1)); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
}

// Cut closes open connections and refuses new ones; Heal listens again on
// the same port.
func TestProxyCutRefusesAndHealReopens(t *testing.T) {
	u := startUpstream(t, true)
	p := startProxy(t, u.addr())
	addr := p.Servers()[0]
	c := dial(t, addr)
	roundTrip(t, c, "a")
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	if got, err := readEnd(t, c); got != "" || err != io.EOF {
		t.Fatalf("open connection after Cut: read %q, %v", got, err)
	}
	if _, err := net.DialTimeout("tcp", addr, 10*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial of a cut proxy: %v", err)
	}
	if err := p.Cut(); err != nil { // twice is fine
		t.Fatal(err)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if got := p.Servers()[0]; got != addr {
		t.Fatalf("healed proxy at %s, was at %s", got, addr)
	}
	roundTrip(t, dial(t, addr), "b")
}

// ResetPeer aborts a connection with a TCP reset the next time it carries
// data, and new connections as soon as they carry data; the data is not
// passed on.
func TestProxyResetPeerAborts(t *testing.T) {
	u := startUpstream(t, false)
	p := startProxy(t, u.addr())
	open := dial(t, p.Servers()[0])
	openS := u.next(t)
	if err := p.ResetPeer(); err != nil {
		t.Fatal(err)
	}
	open.Write([]byte("lost"))
	if got, err := readEnd(t, open); got != "" || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("client of an open connection: read %q, %v", got, err)
	}
	if got, err := readEnd(t, openS); got != "" || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("server of an open connection: read %q, %v", got, err)
	}

	// The server speaks first on this one.
	fresh := dial(t, p.Servers()[0])
	freshS := u.next(t)
	freshS.Write([]byte("lost"))
	for name, c := range map[string]net.Conn{"client": fresh, "server": freshS} {
		if got, err := readEnd(t, c); got != "" || !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("%s of a new connection: read %q, %v", name, got, err)
		}
	}

	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, p.Servers()[0])
	s := u.next(t)
	c.Write([]byte("b"))
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(s, make([]byte, 1)); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
}

// A half-close is passed on: a client that has sent its last bytes still
// gets the answer, the way four-letter words are asked.
func TestProxyHalfClose(t *testing.T) {
	u := startUpstream(t, true)
	p := startProxy(t, u.addr())
	c := dial(t, p.Servers()[0])
	c.Write([]byte("ruok"))
	c.(*net.TCPConn).CloseWrite()
	if got, err := readEnd(t, c); got != "ruok" || err != io.EOF {
		t.Fatalf("after a half-close: read %q, %v", got, err)
	}
}

// Close ends every goroutine of the proxy before it returns, whatever its
// connections were doing, and the proxy refuses faults afterwards.
func TestProxyCloseLeavesNoGoroutine(t *testing.T) {
	u := startUpstream(t, false)
	before := runtime.NumGoroutine()
	p, err := OpenProxy([]string{u.addr(), u.addr()})
	if err != nil {
		t.Fatal(err)
	}
	// A connection whose server reads nothing, written to until every
	// buffer on the way is full, so that the proxy blocks writing to it.
	full := dial(t, p.Servers()[0])
	u.next(t)
	full.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
	for buf := make([]byte, 64<<10); ; {
		if _, err := full.Write(buf); err != nil {
			break
		}
	}
	// One whose chunk waits out a long delay, and one blackholed.
	waiting := dial(t, p.Servers()[1])
	u.next(t)
	if err := p.Delay(time.Hour); err != nil {
		t.Fatal(err)
	}
	waiting.Write([]byte("x"))
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	dial(t, p.Servers()[1]).Write([]byte("x"))
	u.next(t)

	p.Close()
	// Its goroutines may still be returning, but none is waiting.
	if blocked := blockedInProxy(); blocked != "" {
		t.Fatalf("goroutines of the proxy still blocked after Close:\n%s", blocked)
	}
	wait.Until(t, 10*time.Second, "the proxy's goroutines to end", func() bool {
		return runtime.NumGoroutine() <= before
	})
	p.Close()
	for name, fault := range map[string]func() error{
		"Cut": p.Cut, "Blackhole": p.Blackhole, "ResetPeer": p.ResetPeer, "Heal": p.Heal,
		"Delay": func() error { return p.Delay(time.Millisecond) },
	} {
		if err := fault(); !errors.Is(err, errClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
}

// blockedInProxy returns the stacks of the goroutines in the proxy's code
// that are blocked rather than running or about to run.
func blockedInProxy() string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "zkserver.(*link)") && !strings.Contains(g, "zkserver.(*Proxy)") {
			continue
		}
		if !strings.Contains(g, "[runnable]") && !strings.Contains(g, "[running]") {
			found = append(found, g)
		}
	}
	return strings.Join(found, "\n\n")
}

// BenchmarkProxyDelay measures what a round trip through the proxy to an
// echo server costs beyond twice the delay, against the same round trip
// made directly: the median of each, reported as "µs-over-2d" (and the
// 90th percentile as "p90-µs-over-2d").
func BenchmarkProxyDelay(b *testing.B) {
	for _, d := range []time.Duration{0, 250 * time.Microsecond, time.Millisecond} {
		b.Run(d.String(), func(b *testing.B) {
			u := startUpstream(b, true)
			p := startProxy(b, u.addr())
			if err := p.Delay(d); err != nil {
				b.Fatal(err)
			}
			direct, proxied := dial(b, u.addr()), dial(b, p.Servers()[0])
			roundTrip(b, proxied, "warm")
			var dt, pt []time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				roundTrip(b, direct, "ping")
				mid := time.Now()
				roundTrip(b, proxied, "ping")
				dt, pt = append(dt, mid.Sub(start)), append(pt, time.Since(mid))
			}
			slices.Sort(dt)
			slices.Sort(pt)
			over := func(q float64) float64 {
				i := int(q * float64(len(pt)-1))
				return float64(pt[i]-dt[i]-2*d) / float64(time.Microsecond)
			}
			b.ReportMetric(over(0.5), "µs-over-2d")
			b.ReportMetric(over(0.9), "p90-µs-over-2d")
		})
	}
}
