package zktest

import (
	"errors"
	"testing"

	"github.com/zkcoord/zkcoord/zktest/zkserver"
)

// Proxy is a fault-injecting TCP proxy in front of every server of a
// Cluster: a zkserver.Proxy (see there for its faults) that closes with
// the cluster. Its methods are safe for concurrent use.
type Proxy struct {
	*zkserver.Proxy
	cluster *Cluster // nil for a peer link's
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
	zp, err := zkserver.OpenProxy(c.Servers())
	if err != nil {
		return nil, err
	}
	p := &Proxy{Proxy: zp, cluster: c}
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

// Close stops the proxy, closes all its connections and waits for its
// goroutines to end. It is idempotent.
func (p *Proxy) Close() {
	p.Proxy.Close()
	if p.cluster != nil {
		p.cluster.forgetProxy(p)
	}
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
