package zkconn

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// connect opens a connection to the session: a new one while the client
// has no session id, the client's own after. It tries the servers in
// turn, each name dialed (and so resolved) afresh, pausing up to a second
// after every full round as ClientCnxn's host provider does (and a little
// before each attempt to re-attach), until a
// server answers or ctx ends. A server that closes the connection without
// answering the handshake (ZooKeeper's refusal of a client whose
// lastZxidSeen is ahead of it, a server without a quorum) is skipped. An
// answer with a timeout of zero or less says the session is gone: the
// error wraps wire.ErrSessionExpired and no other server is tried; a
// SASL exchange that fails wraps wire.ErrAuthFailed and ends the
// attempts likewise.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	var errs []error
	for tried := 0; ; tried++ {
		var wait time.Duration
		if c.sessionID != 0 {
			// Before each attempt to re-attach, a random pause, as
			// ClientCnxn.startConnect makes (there up to a second; here
			// also at most a tenth of the session timeout), so that
			// clients cut off together do not return together.
			wait = rand.N(min(time.Second, c.SessionTimeout()/10) + 1)
		}
		n := c.serverCount()
		if tried > 0 && tried%n == 0 {
			wait = rand.N(time.Second)
		}
		if wait > 0 {
			pause := time.NewTimer(wait)
			select {
			case <-pause.C:
			case <-ctx.Done():
				pause.Stop()
				return nil, fmt.Errorf("%w: %w (%w)", ErrNoServer, ctx.Err(), errors.Join(errs...))
			}
		}
		if tried > 0 && tried%n == 0 {
			errs = errs[:0]
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w: %w (%w)", ErrNoServer, err, errors.Join(errs...))
		}
		addr := c.nextServer()
		cn, err := c.handshake(ctx, addr)
		if errors.Is(err, wire.ErrSessionExpired) || errors.Is(err, wire.ErrAuthFailed) {
			return nil, err
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", addr, err))
			if c.cfg.Failed != nil {
				c.cfg.Failed(addr, err)
			}
			continue
		}
		return cn, nil
	}
}

// minConnectTimeout is the least time a connection attempt is given,
// however short the session timeout.
const minConnectTimeout = time.Second

// handshake dials addr and sends the ConnectRequest: lastZxidSeen, the
// timeout asked for, the session's id and password (zero for a new
// session) and readOnly false. The whole exchange is bounded by the
// session timeout divided among the servers, ClientCnxn's connectTimeout,
// but never less than minConnectTimeout.
func (c *Client) handshake(ctx context.Context, addr string) (*conn, error) {
	c.mu.Lock()
	req := wire.ConnectRequest{
		ProtocolVersion: wire.ProtocolVersion,
		LastZxidSeen:    c.lastZxid,
		TimeOut:         int32(c.cfg.SessionTimeout / time.Millisecond),
		SessionID:       c.sessionID,
		Passwd:          append([]byte(nil), c.passwd...),
	}
	budget := max(c.timeout/time.Duration(len(c.servers)), minConnectTimeout)
	c.mu.Unlock()
	dctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	nc, err := c.cfg.Dial(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	deadline, _ := dctx.Deadline()
	nc.SetDeadline(deadline)
	stop := context.AfterFunc(dctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	fw := wire.NewFrameWriter(nc, 0)
	fr := wire.NewFrameReader(nc, c.cfg.MaxReply)
	var resp wire.ConnectResponse
	sent := time.Now()
	err = fw.WriteFrame(&req)
	if err == nil {
		var b []byte
		if b, err = fr.ReadFrame(); err == nil {
			err = wire.Unmarshal(b, &resp)
		}
	}
	if !stop() && err == nil {
		err = dctx.Err()
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	if resp.TimeOut <= 0 {
		nc.Close()
		if req.SessionID == 0 {
			return nil, fmt.Errorf("zkconn: %s answered a new session with timeout %d", addr, resp.TimeOut)
		}
		return nil, fmt.Errorf("%w (session 0x%x, via %s)", errExpired, req.SessionID, addr)
	}
	if req.SessionID != 0 && resp.SessionID != req.SessionID {
		nc.Close()
		return nil, fmt.Errorf("zkconn: %s answered session 0x%x with 0x%x", addr, req.SessionID, resp.SessionID)
	}
	negotiated := time.Duration(resp.TimeOut) * time.Millisecond
	c.mu.Lock()
	c.sessionID = resp.SessionID
	c.passwd = resp.Passwd
	c.timeout = negotiated
	c.server = addr
	c.mu.Unlock()
	c.renewed(sent) // the server touched the session when it answered
	if c.cfg.SASL != nil {
		// The exchange gets a budget of its own: a mechanism may ask a
		// KDC for a ticket first.
		sctx, cancel := context.WithTimeout(ctx, budget)
		nc.SetDeadline(time.Now().Add(budget))
		stop := context.AfterFunc(sctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
		err := c.authenticate(sctx, fw, fr, addr)
		if !stop() && err == nil {
			err = sctx.Err()
		}
		cancel()
		if err != nil {
			nc.Close()
			return nil, err
		}
	}
	nc.SetDeadline(time.Time{})
	readTimeout := negotiated * 2 / 3
	pingEvery := readTimeout / 3
	if c.cfg.PingEvery != nil {
		pingEvery = c.cfg.PingEvery(negotiated)
	}
	return &conn{
		c:           c,
		nc:          nc,
		fr:          fr,
		opened:      time.Now(),
		readTimeout: readTimeout,
		pingEvery:   pingEvery,
		stop:        make(chan struct{}),
	}, nil
}
