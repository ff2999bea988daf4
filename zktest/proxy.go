package zktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxy is a fault-injecting TCP proxy with one listener per server of a
// cluster, for one client (or a group of clients that should see the same
// faults). Faults apply to connections already open and to new ones. Its
// methods are safe for concurrent use.
type Proxy struct {
	cluster *Cluster

	mu      sync.Mutex
	api     *toxiproxy.ApiServer
	proxies []*toxiproxy.Proxy
	addrs   []string
	closed  bool
}

// NewProxy starts a Proxy in front of every server of the cluster
// (listening on free loopback ports) and registers tb.Cleanup to close it.
// It fails the test when the proxy cannot start.
func (c *Cluster) NewProxy(tb testing.TB) *Proxy {
	tb.Helper()
	p, err := c.newProxy()
	if err != nil {
		tb.Fatalf("zktest: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}

// OpenProxy is NewProxy returning an error, for programs and clusters
// started with Launch: the proxy closes with the cluster, or earlier with its
// own Close.
func (c *Cluster) OpenProxy() (*Proxy, error) {
	return c.newProxy()
}

// errClosed is returned by the methods of a closed Cluster or Proxy.
var errClosed = errors.New("zktest: cluster is shut down")

func (c *Cluster) newProxy() (*Proxy, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	p, err := openProxy(c.Servers())
	if err != nil {
		return nil, err
	}
	p.cluster = c
	// Also closed when the cluster is cleaned up, in case the proxy's own
	// cleanup runs later.
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		p.Close()
		return nil, errClosed
	}
	c.proxies = append(c.proxies, p)
	c.mu.Unlock()
	return p, nil
}

// openProxy starts a proxy with one listener per upstream address.
func openProxy(upstreams []string) (*Proxy, error) {
	p := &Proxy{api: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
	for i, addr := range upstreams {
		tp := toxiproxy.NewProxy(p.api, fmt.Sprintf("zk%d", i), "127.0.0.1:0", addr)
		if err := tp.Start(); err != nil {
			p.Close()
			return nil, fmt.Errorf("starting proxy for %s: %w", addr, err)
		}
		p.proxies = append(p.proxies, tp)
		p.addrs = append(p.addrs, tp.Listen) // the bound address once started
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	for _, tp := range p.proxies {
		tp.Stop()
	}
	return nil
}

// Blackhole keeps connections open but delivers nothing in either direction:
// every byte sent either way is dropped, for open and new connections (new
// TCP connections are still accepted). Because bytes were lost, Heal closes
// the connections that were open during a blackhole; clients reconnect.
func (p *Proxy) Blackhole() error {
	return p.addToxics("blackhole", "timeout", `{"timeout":0}`)
}

// Delay adds d of latency to every chunk of data in each direction, so a
// request/response round trip takes at least 2*d longer. d counts to the
// microsecond. A second Delay replaces the first.
func (p *Proxy) Delay(d time.Duration) error {
	if err := p.removeToxics("delay"); err != nil {
		return err
	}
	return p.addToxics("delay", delayToxicType, fmt.Sprintf(`{"micros":%d}`, d.Microseconds()))
}

// ResetPeer makes connections fail with a TCP reset: the next data sent in
// either direction on a connection makes the proxy abort it. Connections
// opened after ResetPeer are aborted with RST as soon as they carry data;
// connections already open are closed when they next carry data (a reset
// where the platform allows, otherwise an ordinary close).
func (p *Proxy) ResetPeer() error {
	return p.addToxics("reset", "reset_peer", `{"timeout":0}`)
}

// Heal removes every fault: toxics are removed (closing connections that
// were blackholed) and a cut proxy listens again.
func (p *Proxy) Heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	var errs []error
	for i, tp := range p.proxies {
		tp.Toxics.ResetToxics(context.Background())
		if err := tp.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
			errs = append(errs, fmt.Errorf("zktest: re-enabling proxy %d on %s: %w", i, p.addrs[i], err))
		}
	}
	return errors.Join(errs...)
}

// Close stops the proxy and closes all its connections. It is idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	for _, tp := range p.proxies {
		// Remove toxics first: a removed blackhole closes its links,
		// which lets their goroutines exit.
		tp.Toxics.ResetToxics(context.Background())
		tp.Stop()
	}
	if p.cluster != nil {
		p.cluster.forgetProxy(p)
	}
}

func (p *Proxy) addToxics(name, typ, attrs string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	for i, tp := range p.proxies {
		for _, stream := range []string{"upstream", "downstream"} {
			js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`,
				name+"_"+stream, typ, stream, attrs)
			if _, err := tp.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
				if errors.Is(err, toxiproxy.ErrToxicAlreadyExists) {
					continue
				}
				return fmt.Errorf("zktest: adding %s toxic to proxy %d: %w", typ, i, err)
			}
		}
	}
	return nil
}

func (p *Proxy) removeToxics(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	for _, tp := range p.proxies {
		for _, stream := range []string{"upstream", "downstream"} {
			err := tp.Toxics.RemoveToxic(context.Background(), name+"_"+stream)
			if err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
				return err
			}
		}
	}
	return nil
}

func (c *Cluster) forgetProxy(p *Proxy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, q := range c.proxies {
		if q == p {
			c.proxies = append(c.proxies[:i], c.proxies[i+1:]...)
			return
		}
	}
}
