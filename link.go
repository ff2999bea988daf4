package zkcoord

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// errGateClosed refuses new connections once a Session has ended, so that
// go-zookeeper cannot open a second ZooKeeper session behind our back.
var errGateClosed = errors.New("zkcoord: session ended; no new connections")

// handshake is what the server told us when a connection was established.
type handshake struct {
	timeout   time.Duration
	sessionID int64
	passwd    []byte
}

// link is one TCP (or TLS) connection to a server. It measures server
// contact for the Session and reads the connect response to learn the
// negotiated session timeout.
//
// Server contact is counted conservatively. The server renews a session
// when it receives a request, so a reply proves the session was renewed no
// earlier than the moment its request was sent, and that is the time the
// link records. Watch notifications, which the server sends unasked, prove
// nothing about the client-to-server direction and are not counted. Every
// request gets exactly one reply, in order, so send times wait in a FIFO.
// The connect response is the first reply; it proves renewal only when it
// grants our session: a server that reports the session expired (a zero
// timeout) or gives another one renewed nothing.
type link struct {
	net.Conn
	raw    net.Conn // the connection under TLS, or Conn itself
	s      *Session
	opened time.Duration // when it was dialled, on the Session's clock
	closed atomic.Bool

	mu    sync.Mutex
	first []byte // bytes of the connect response gathered so far
	done  bool

	sendMu sync.Mutex
	out    frameScanner
	sent   []time.Duration // send times of requests awaiting a reply
	in     frameScanner    // used by Read only
	// greeted is set once the connect request has been written.
	greeted bool
	// answered is set once the connect response has begun; connectSent is
	// when the connect request was written.
	answered    bool
	connectSent time.Duration
}

// Close closes the connection and records that it is gone. Under TLS it
// closes the raw connection: closing the tls.Conn would first write a
// close_notify alert, which waits up to five seconds for a server that
// stopped reading, and the server needs no alert to end the connection.
func (l *link) Close() error {
	l.closed.Store(true)
	return l.raw.Close()
}

func (l *link) Write(p []byte) (int, error) {
	l.sendMu.Lock()
	now := l.s.now()
	first := len(l.sent) == 0 && !l.greeted
	l.out.feed(p, func(int32) { l.sent = append(l.sent, now) })
	l.greeted = true
	l.sendMu.Unlock()
	if !first && l.s.written.waiting() {
		l.s.written.written(p)
	}
	n, err := l.Conn.Write(p)
	if err != nil {
		// go-zookeeper hands this error to the request as it is: make the
		// raw socket error read as the connection loss it is.
		err = fmt.Errorf("%w: write to %s: %w", zk.ErrConnectionClosed, l.RemoteAddr(), err)
	}
	return n, err
}

func (l *link) Read(p []byte) (int, error) {
	n, err := l.Conn.Read(p)
	if n > 0 {
		l.in.feed(p[:n], func(xid int32) {
			if xid == watchXid {
				return
			}
			l.sendMu.Lock()
			if len(l.sent) > 0 {
				if l.answered {
					l.s.heard(l.sent[0])
				} else {
					l.answered, l.connectSent = true, l.sent[0] // see sniff
				}
				l.sent = l.sent[1:]
			}
			l.sendMu.Unlock()
		})
		l.sniff(p[:n])
	}
	return n, err
}

// watchXid marks a frame the server sends unasked: a watch notification.
const watchXid = -1

// frameScanner follows length-prefixed frames in a byte stream and reports
// the first int32 of each frame's body (the xid, for requests and replies).
type frameScanner struct {
	head  [8]byte
	headN int
	left  int // body bytes of the current frame not yet seen
}

func (f *frameScanner) feed(p []byte, frame func(xid int32)) {
	for len(p) > 0 {
		if f.left > 0 {
			n := min(f.left, len(p))
			f.left -= n
			p = p[n:]
			continue
		}
		n := copy(f.head[f.headN:], p)
		f.headN += n
		p = p[n:]
		if f.headN < len(f.head) {
			return
		}
		size := int(binary.BigEndian.Uint32(f.head[:4]))
		f.headN = 0
		f.left = max(size-4, 0)
		frame(int32(binary.BigEndian.Uint32(f.head[4:])))
	}
}

// sniff collects the connect response: int32 length, int32 protocol
// version, int32 timeout, int64 session id, int32 password length, password.
func (l *link) sniff(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	l.first = append(l.first, p...)
	if len(l.first) < 4 {
		return
	}
	size := int(binary.BigEndian.Uint32(l.first))
	if len(l.first) < 4+size {
		return
	}
	l.done = true
	b := l.first[4 : 4+size]
	l.first = nil
	if len(b) < 20 {
		return
	}
	h := handshake{
		timeout:   time.Duration(int32(binary.BigEndian.Uint32(b[4:]))) * time.Millisecond,
		sessionID: int64(binary.BigEndian.Uint64(b[8:])),
	}
	if n := int(int32(binary.BigEndian.Uint32(b[16:]))); n > 0 && 20+n <= len(b) {
		h.passwd = append([]byte(nil), b[20:20+n]...)
	}
	if id := l.s.ID(); h.timeout > 0 && (id == 0 || id == h.sessionID) {
		l.sendMu.Lock()
		l.s.heard(l.connectSent)
		l.sendMu.Unlock()
	}
	l.s.handshook(h)
}

// dial is the go-zookeeper Dialer of a Session.
func (s *Session) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	if s.gate.Load() {
		return nil, errGateClosed
	}
	c, raw, err := s.open(network, address, timeout)
	if err != nil {
		return nil, err
	}
	l := &link{Conn: c, raw: raw, s: s, opened: s.now()}
	s.linkMu.Lock()
	defer s.linkMu.Unlock()
	if s.gate.Load() { // the session ended while we dialled
		raw.Close()
		return nil, errGateClosed
	}
	s.link = l
	return l, nil
}

// open connects to a server through Config.Dialer and, if Config.TLS is
// set, completes a TLS handshake. raw is the connection under TLS (or c).
func (s *Session) open(network, address string, timeout time.Duration) (c, raw net.Conn, err error) {
	if s.cfg.Dialer != nil {
		c, err = s.cfg.Dialer(network, address, timeout)
	} else {
		c, err = net.DialTimeout(network, address, timeout)
	}
	if err != nil {
		return nil, nil, err
	}
	raw = c
	if s.cfg.TLS != nil {
		cfg := s.cfg.TLS.Clone()
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(address); err == nil {
				cfg.ServerName = host
			}
		}
		tc := tls.Client(c, cfg)
		_ = tc.SetDeadline(time.Now().Add(timeout))
		if err := tc.Handshake(); err != nil {
			c.Close()
			return nil, nil, err
		}
		_ = tc.SetDeadline(time.Time{})
		c = tc
	}
	return c, raw, nil
}

// dropLink closes the current connection, which makes go-zookeeper
// reconnect (or, once the gate is closed, give up).
func (s *Session) dropLink() {
	s.linkMu.Lock()
	l := s.link
	s.linkMu.Unlock()
	if l != nil {
		l.Close()
	}
}

// dropSilentLink closes the current connection once it has been open for
// redial without bringing a reply, and returns when to look again. A
// connection that is younger is left alone to finish its handshake:
// go-zookeeper waits a second before it dials a server it has already
// tried, so closing a fresh connection early can cost more than the time
// the Session has left.
func (s *Session) dropSilentLink(redial time.Duration) time.Duration {
	s.linkMu.Lock()
	l := s.link
	s.linkMu.Unlock()
	if l == nil || l.closed.Load() {
		return redial // go-zookeeper has yet to dial again
	}
	idle := s.now() - max(l.opened, time.Duration(s.lastRecv.Load()))
	if idle < redial {
		return redial - idle
	}
	l.Close()
	return redial
}
