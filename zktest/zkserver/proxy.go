package zkserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a fault-injecting TCP proxy with one listener per server of a
// cluster, for one client (or a group of clients that should see the same
// faults). Faults apply to connections already open and to new ones. Its
// methods are safe for concurrent use. zktest's Proxy is this one, opened
// in front of a test's cluster.
//
// It is written on the standard library alone: each connection through it
// is relayed by two goroutines per direction (one reads, one writes, so
// that delayed chunks in flight do not add up their delays), and Close
// waits for all of them.
type Proxy struct {
	upstreams []string
	addrs     []string
	// ctx ends with Close, cancelling the dials under way.
	ctx    context.Context
	cancel context.CancelFunc
	// faults holds the faults in force; every change stores a new value.
	faults atomic.Pointer[faults]
	// wg counts the accept loops and the connections' goroutines.
	wg sync.WaitGroup

	mu        sync.Mutex
	listeners []net.Listener // by server; nil while cut
	links     map[*link]struct{}
	closed    bool
}

// faults is the set of faults in force. It is never modified: a change
// stores a new value and closes the old one's changed channel, so that
// chunks waiting out a delay look at the new one.
type faults struct {
	blackhole bool
	reset     bool
	delay     time.Duration
	changed   chan struct{}
}

// OpenProxy starts a Proxy with one listener per upstream address, each on
// a free loopback port. Close it when done.
func OpenProxy(upstreams []string) (*Proxy, error) {
	p := &Proxy{upstreams: append([]string(nil), upstreams...), links: make(map[*link]struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.faults.Store(&faults{changed: make(chan struct{})})
	for _, addr := range upstreams {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("starting proxy for %s: %w", addr, err)
		}
		p.listeners = append(p.listeners, ln)
		p.addrs = append(p.addrs, ln.Addr().String())
	}
	for i, ln := range p.listeners {
		p.serve(i, ln)
	}
	return p, nil
}

// Servers returns the proxied addresses, one per server in server order.
func (p *Proxy) Servers() []string {
	return append([]string(nil), p.addrs...)
}

// ConnectString returns the comma-joined proxied addresses.
func (p *Proxy) ConnectString() string {
	return strings.Join(p.addrs, ",")
}

// Cut disables the proxy: its listeners close, so new connections are
// refused, and every open connection is closed. Heal reopens the listeners
// on the same ports.
func (p *Proxy) Cut() error {
	return p.whileOpen(func() error {
		p.closeAll()
		return nil
	})
}

// Blackhole keeps connections open but delivers nothing in either direction:
// every byte sent either way is dropped, for open and new connections (new
// TCP connections are still accepted). Because bytes were lost, Heal closes
// the connections that were open during a blackhole; clients reconnect.
func (p *Proxy) Blackhole() error {
	return p.whileOpen(func() error {
		for l := range p.links {
			l.blackholed = true
		}
		p.setFaults(func(f *faults) { f.blackhole = true })
		return nil
	})
}

// Delay adds d of latency to every chunk of data in each direction, so a
// request/response round trip takes at least 2*d longer: each chunk is
// passed on d after the proxy read it, so chunks in flight do not add up
// their delays. d counts to the microsecond. A second Delay replaces the
// first, also for the chunks already waiting.
func (p *Proxy) Delay(d time.Duration) error {
	return p.whileOpen(func() error {
		p.setFaults(func(f *faults) { f.delay = max(d, 0).Truncate(time.Microsecond) })
		return nil
	})
}

// ResetPeer makes connections fail with a TCP reset: the next data sent in
// either direction on a connection makes the proxy abort it, sending RST to
// both ends, and that data is not passed on. This holds for connections
// already open and for those opened after ResetPeer, which are aborted as
// soon as they carry data.
func (p *Proxy) ResetPeer() error {
	return p.whileOpen(func() error {
		p.setFaults(func(f *faults) { f.reset = true })
		return nil
	})
}

// Heal removes every fault: the connections that were open during a
// blackhole are closed, delays and resets end, and a cut proxy listens
// again on its ports.
func (p *Proxy) Heal() error {
	return p.whileOpen(func() error {
		// Closed before the blackhole ends, so that nothing more passes on
		// them.
		for l := range p.links {
			if l.blackholed {
				l.close(false)
			}
		}
		p.setFaults(func(f *faults) { *f = faults{} })
		var errs []error
		for i, ln := range p.listeners {
			if ln != nil {
				continue
			}
			ln, err := net.Listen("tcp", p.addrs[i])
			if err != nil {
				errs = append(errs, fmt.Errorf("zkserver: re-enabling proxy %d on %s: %w", i, p.addrs[i], err))
				continue
			}
			p.listeners[i] = ln
			p.serve(i, ln)
		}
		return errors.Join(errs...)
	})
}

// whileOpen runs f with p.mu held and returns its error, or errClosed
// without running it once p is closed.
func (p *Proxy) whileOpen(f func() error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	return f()
}

// Close stops the proxy, closes all its connections and waits for its
// goroutines to end. It is idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		if p.cancel != nil {
			p.cancel()
		}
		p.closeAll()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// closeAll closes the listeners and every connection. p.mu is held.
func (p *Proxy) closeAll() {
	for i, ln := range p.listeners {
		if ln != nil {
			ln.Close()
			p.listeners[i] = nil
		}
	}
	for l := range p.links {
		l.close(false)
	}
}

// setFaults changes the faults in force. p.mu is held.
func (p *Proxy) setFaults(change func(*faults)) {
	old := p.faults.Load()
	f := *old
	change(&f)
	f.changed = make(chan struct{})
	p.faults.Store(&f)
	close(old.changed)
}

// serve accepts connections on ln, the listener for server i, until it is
// closed. p.mu is held, or p is not yet shared.
func (p *Proxy) serve(i int, ln net.Listener) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil { // such as too many open files: try again
				t := time.NewTimer(10 * time.Millisecond)
				select {
				case <-t.C:
				case <-p.ctx.Done():
					t.Stop()
					return
				}
				continue
			}
			l := &link{p: p, client: c, done: make(chan struct{})}
			if !p.register(i, ln, l) {
				c.Close()
				continue // the listener is closing
			}
			p.wg.Add(1)
			go l.run(p.upstreams[i])
		}
	}()
}

// register adds l, accepted on ln for server i, to the open connections,
// unless ln was closed meanwhile.
func (p *Proxy) register(i int, ln net.Listener, l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.listeners[i] != ln {
		return false
	}
	l.blackholed = p.faults.Load().blackhole
	p.links[l] = struct{}{}
	return true
}

func (p *Proxy) unregister(l *link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.links, l)
}

// link is one client connection and its connection to the server.
type link struct {
	p      *Proxy
	client net.Conn
	done   chan struct{} // closed by close
	// blackholed is set when the link was open during a blackhole, so
	// that Heal closes it (guarded by p.mu).
	blackholed bool

	mu     sync.Mutex
	server net.Conn // nil until dialled
	closed bool
}

// chunk is what one read returned, and when: data, or the error that ended
// the stream.
type chunk struct {
	data []byte
	err  error
	at   time.Time
}

// queueLen is how many chunks may wait out a delay in each direction.
const queueLen = 1024

// run dials the server and relays between the two connections until the
// link is closed, or both directions ended.
func (l *link) run(upstream string) {
	defer l.p.wg.Done()
	defer l.p.unregister(l)
	defer l.close(false)
	var d net.Dialer
	server, err := d.DialContext(l.p.ctx, "tcp", upstream)
	if err != nil {
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		server.Close()
		return
	}
	l.server = server
	l.mu.Unlock()
	up, down := make(chan chunk, queueLen), make(chan chunk, queueLen)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); l.read(l.client, up) }()
	go func() { defer wg.Done(); l.read(server, down) }()
	go func() { defer wg.Done(); l.write(down, l.client) }()
	l.write(up, server)
	wg.Wait()
}

// read passes what src sends to out, stamped with the time it was read,
// and ends with the error that ends src.
func (l *link) read(src net.Conn, out chan<- chunk) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			at := time.Now()
			f := l.p.faults.Load()
			switch {
			case f.blackhole: // dropped
			case f.reset:
				l.close(true)
				return
			default:
				select {
				case out <- chunk{data: bytes.Clone(buf[:n]), at: at}:
				case <-l.done:
					return
				}
			}
		}
		if err != nil {
			select {
			case out <- chunk{err: err, at: time.Now()}:
			case <-l.done:
			}
			return
		}
	}
}

// write writes the chunks from in to dst, each once the delay in force has
// passed since it was read. The end of the stream is passed on as a
// half-close; an error closes the link.
func (l *link) write(in <-chan chunk, dst net.Conn) {
	for {
		var c chunk
		select {
		case c = <-in:
		case <-l.done:
			return
		}
		if !l.hold(c.at) {
			return
		}
		f := l.p.faults.Load()
		switch {
		case f.blackhole:
			if c.err != nil {
				return // not even the end passes; Heal closes the link
			}
		case c.err == io.EOF:
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
				return
			}
			l.close(false)
			return
		case c.err != nil:
			l.close(false)
			return
		case f.reset:
			l.close(true)
			return
		default:
			if _, err := dst.Write(c.data); err != nil {
				l.close(false)
				return
			}
		}
	}
}

// close closes both connections, with a TCP reset when reset is set. It
// may be called more than once.
func (l *link) close(reset bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	close(l.done)
	for _, c := range []net.Conn{l.client, l.server} {
		if c == nil {
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok && reset {
			tc.SetLinger(0) // close sends RST
		}
		c.Close()
	}
}
