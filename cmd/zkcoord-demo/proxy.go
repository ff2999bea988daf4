package main

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// faultProxy stands between one worker and the servers, one loopback
// listener per server, and can cut the worker off: while blackholed, the
// bytes sent either way are dropped and connections stay open, the way a
// network partition looks to both ends. Heal lets bytes through again and
// closes the connections that lost bytes, so their ends reconnect.
//
// It is the demo's own small relay rather than zktest's Proxy: zktest
// imports testing and goleak, which the zkcoord binary does not link.
// Its methods are safe for concurrent use.
type faultProxy struct {
	addrs     []string
	listeners []net.Listener
	wg        sync.WaitGroup

	mu     sync.Mutex
	cut    bool                // blackholed
	links  map[*relayLink]bool // open links
	closed bool
}

// relayLink is one client connection and its connection to the server.
type relayLink struct {
	client, server net.Conn
	lost           bool // bytes were dropped on it (guarded by faultProxy.mu)
}

// newFaultProxy listens on a free loopback port for each of upstream.
func newFaultProxy(upstream []string) (*faultProxy, error) {
	p := &faultProxy{links: map[*relayLink]bool{}}
	for _, u := range upstream {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("starting a proxy for %s: %w", u, err)
		}
		p.listeners = append(p.listeners, l)
		p.addrs = append(p.addrs, l.Addr().String())
		p.wg.Add(1)
		go p.accept(l, u)
	}
	return p, nil
}

// Servers returns the proxy's addresses, one per server in server order.
func (p *faultProxy) Servers() []string { return append([]string(nil), p.addrs...) }

// Blackhole drops every byte from now on, on open and new connections.
func (p *faultProxy) Blackhole() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errProxyClosed
	}
	p.cut = true
	return nil
}

// Heal ends a blackhole and closes the connections that lost bytes.
func (p *faultProxy) Heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errProxyClosed
	}
	p.cut = false
	for k := range p.links {
		if k.lost {
			k.close()
		}
	}
	return nil
}

// Close stops listening, closes every connection and waits for the relay's
// goroutines to end. It is idempotent.
func (p *faultProxy) Close() {
	p.mu.Lock()
	p.closed = true
	for k := range p.links {
		k.close()
	}
	p.mu.Unlock()
	for _, l := range p.listeners {
		l.Close()
	}
	p.wg.Wait()
}

var errProxyClosed = errors.New("fault proxy closed")

func (p *faultProxy) accept(l net.Listener, upstream string) {
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return // closed
		}
		s, err := net.Dial("tcp", upstream)
		if err != nil {
			c.Close()
			continue
		}
		k := &relayLink{client: c, server: s}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			k.close()
			return
		}
		p.links[k] = true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(k, c, s)
		go p.pipe(k, s, c)
	}
}

// pipe copies from src to dst, dropping what arrives during a blackhole.
// When either side ends, the whole link is closed.
func (p *faultProxy) pipe(k *relayLink, src, dst net.Conn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.links, k)
		p.mu.Unlock()
		k.close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			drop := p.cut
			if drop {
				k.lost = true
			}
			p.mu.Unlock()
			if !drop {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return // EOF, or the link was closed
		}
	}
}

func (k *relayLink) close() {
	k.client.Close()
	k.server.Close()
}
