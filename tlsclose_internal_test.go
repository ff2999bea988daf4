package zkcoord

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/wait"
	"github.com/zkcoord/zkcoord/zktest"
)

// Closing a TLS connection returns at once. Closing the tls.Conn would first
// write a close_notify alert, which on a connection whose send buffer is
// full (a server that stopped reading) waits five seconds, on the
// goroutine that declares the Session Lost.
func TestDropTLSLinkDoesNotWaitForTheServer(t *testing.T) {
	c := zktest.Start(t, zktest.WithTLS())
	cfg, err := Config{Servers: c.SecureServers(), TLS: c.ClientTLSConfig()}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var under *fullConn
	cfg.Dialer = func(network, addr string, timeout time.Duration) (net.Conn, error) {
		conn, err := net.DialTimeout(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		under = &fullConn{Conn: conn, closed: make(chan struct{})}
		return under, nil
	}
	s := &Session{cfg: cfg}
	var l net.Conn
	// The secure port may open a moment after the plain one answers.
	wait.For(t, 30*time.Second, "the secure port", func() error {
		var err error
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err = s.dial(ctx, "tcp", c.SecureServers()[0])
		return err
	})
	under.fill()
	start := time.Now()
	l.Close()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("closing a TLS connection to a server that does not read took %v", d)
	}
}

// fullConn is a connection whose send buffer can be made full: from fill
// on, a write waits for its deadline or for Close.
type fullConn struct {
	net.Conn
	mu       sync.Mutex
	full     bool
	deadline time.Time
	closed   chan struct{}
	once     sync.Once
}

func (c *fullConn) fill() {
	c.mu.Lock()
	c.full = true
	c.mu.Unlock()
}

func (c *fullConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

func (c *fullConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *fullConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	full, deadline := c.full, c.deadline
	c.mu.Unlock()
	if !full {
		return c.Conn.Write(p)
	}
	var expire <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expire = t.C
	}
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	case <-expire:
		return 0, os.ErrDeadlineExceeded
	}
}

func (c *fullConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
