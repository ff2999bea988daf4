package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
	"github.com/zkcoord/zkcoord/zktest"
)

// zktest's fault proxies are made for tests and take a testing.TB. harness
// is the small testing.TB they need outside a test: Fatalf and Skipf end the
// call made through run, Cleanup functions run at close, and temporary
// directories are removed then.
type harness struct {
	testing.TB // nil: only the methods below are used by zktest
	mu         sync.Mutex
	cleanups   []func()
	dirs       []string
	failed     bool
	msg        string
}

// stopCall ends a call made through harness.run.
type stopCall struct{}

// run calls f and reports the message of a Fatalf or Skipf that ended it.
func (h *harness) run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopCall); !ok {
				panic(r)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			err = errors.New(h.msg)
		}
	}()
	f()
	return nil
}

func (h *harness) Helper() {}
func (h *harness) Name() string {
	return "zkcoord-demo"
}
func (h *harness) Logf(format string, args ...any) {}
func (h *harness) Fatalf(format string, args ...any) {
	h.mu.Lock()
	h.failed, h.msg = true, fmt.Sprintf(format, args...)
	h.mu.Unlock()
	panic(stopCall{})
}
func (h *harness) Skipf(format string, args ...any) {
	h.mu.Lock()
	h.msg = fmt.Sprintf(format, args...)
	h.mu.Unlock()
	panic(stopCall{})
}
func (h *harness) Failed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failed
}
func (h *harness) Cleanup(f func()) {
	h.mu.Lock()
	h.cleanups = append(h.cleanups, f)
	h.mu.Unlock()
}
func (h *harness) TempDir() string {
	d, err := os.MkdirTemp("", "zkcoord-demo-")
	if err != nil {
		h.Fatalf("creating a temporary directory: %v", err)
	}
	h.mu.Lock()
	h.dirs = append(h.dirs, d)
	h.mu.Unlock()
	return d
}

// close runs the cleanups in reverse order and removes the directories.
func (h *harness) close() {
	h.mu.Lock()
	fs, dirs := h.cleanups, h.dirs
	h.cleanups, h.dirs = nil, nil
	h.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}

// startZooKeeper starts a standalone ZooKeeper server for the demo; the
// harness stops it at close.
func startZooKeeper(h *harness) (*zktest.Cluster, error) {
	c, err := zktest.Launch()
	if err != nil {
		return nil, err
	}
	h.Cleanup(c.Close)
	return c, nil
}

// faultProxy stands between one worker and the servers, and can cut it
// off: bytes stop flowing both ways while connections stay open, the way a
// network partition looks to both ends.
type faultProxy interface {
	Servers() []string
	Blackhole() error
	Heal() error
	Close()
}

// newProxy returns a fault proxy in front of the cluster, or, for servers
// the demo did not start, in front of addrs.
func newProxy(h *harness, c *zktest.Cluster, addrs []string) (faultProxy, error) {
	if c != nil {
		var p *zktest.Proxy
		err := h.run(func() { p = c.NewProxy(h) })
		return p, err
	}
	return newTCPProxy(addrs)
}

// tcpProxy is a fault proxy for servers started by someone else.
type tcpProxy struct {
	mu      sync.Mutex
	api     *toxiproxy.ApiServer
	proxies []*toxiproxy.Proxy
	addrs   []string
}

func newTCPProxy(upstream []string) (*tcpProxy, error) {
	p := &tcpProxy{api: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
	for i, u := range upstream {
		tp := toxiproxy.NewProxy(p.api, fmt.Sprintf("zk%d", i), "127.0.0.1:0", u)
		if err := tp.Start(); err != nil {
			p.Close()
			return nil, fmt.Errorf("starting a proxy for %s: %w", u, err)
		}
		p.proxies = append(p.proxies, tp)
		p.addrs = append(p.addrs, tp.Listen)
	}
	return p, nil
}

func (p *tcpProxy) Servers() []string { return append([]string(nil), p.addrs...) }

func (p *tcpProxy) Blackhole() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tp := range p.proxies {
		for _, stream := range []string{"upstream", "downstream"} {
			js := fmt.Sprintf(`{"name":"blackhole_%s","type":"timeout","stream":%q,"toxicity":1,"attributes":{"timeout":0}}`, stream, stream)
			if _, err := tp.Toxics.AddToxicJson(strings.NewReader(js)); err != nil && !errors.Is(err, toxiproxy.ErrToxicAlreadyExists) {
				return err
			}
		}
	}
	return nil
}

func (p *tcpProxy) Heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tp := range p.proxies {
		tp.Toxics.ResetToxics(context.Background())
	}
	return nil
}

func (p *tcpProxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tp := range p.proxies {
		tp.Toxics.ResetToxics(context.Background())
		tp.Stop()
	}
	p.proxies = nil
}
