package zkcoord

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// dial opens one connection to a server for the Session's client: through
// Config.Dialer (or a plain TCP dial) and, if Config.TLS is set, a TLS
// handshake, all bounded by ctx.
func (s *Session) dial(ctx context.Context, network, address string) (net.Conn, error) {
	var (
		c   net.Conn
		err error
	)
	if s.cfg.Dialer != nil {
		timeout := time.Minute
		if d, ok := ctx.Deadline(); ok {
			timeout = time.Until(d)
		}
		c, err = s.cfg.Dialer(network, address, timeout)
	} else {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, address)
	}
	if err != nil || s.cfg.TLS == nil {
		return c, err
	}
	cfg := s.cfg.TLS.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(address); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tlsConn{tc, c}, nil
}

// tlsConn closes the raw connection under TLS: closing the tls.Conn would
// first write a close_notify alert, which waits for a server that stopped
// reading, and the server needs no alert to end the connection.
type tlsConn struct {
	*tls.Conn
	raw net.Conn
}

func (c tlsConn) Close() error { return c.raw.Close() }
