package zkcoord

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"
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

// link is one TCP (or TLS) connection to a server. It records the time of
// every byte received, which is how a Session measures server silence, and
// reads the connect response to learn the negotiated session timeout.
type link struct {
	net.Conn
	s *Session

	mu    sync.Mutex
	first []byte // bytes of the connect response gathered so far
	done  bool
}

func (l *link) Read(p []byte) (int, error) {
	n, err := l.Conn.Read(p)
	if n > 0 {
		l.s.heard()
		l.sniff(p[:n])
	}
	return n, err
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
	l.s.handshook(h)
}

// dial is the go-zookeeper Dialer of a Session.
func (s *Session) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	if s.gate.Load() {
		return nil, errGateClosed
	}
	var (
		c   net.Conn
		err error
	)
	if s.cfg.Dialer != nil {
		c, err = s.cfg.Dialer(network, address, timeout)
	} else {
		c, err = net.DialTimeout(network, address, timeout)
	}
	if err != nil {
		return nil, err
	}
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
			return nil, err
		}
		_ = tc.SetDeadline(time.Time{})
		c = tc
	}
	l := &link{Conn: c, s: s}
	s.linkMu.Lock()
	defer s.linkMu.Unlock()
	if s.gate.Load() { // the session ended while we dialled
		c.Close()
		return nil, errGateClosed
	}
	s.link = l
	return l, nil
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
