package zkserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ErrSessionGone is returned by ExpireSession when the server refuses to
// attach to the session: it has already expired or been closed, or the
// password is wrong (ZooKeeper does not tell these apart).
var ErrSessionGone = errors.New("zkserver: session does not exist (already expired or closed) or the password is wrong")

const (
	opCloseSession = -11
	closeXid       = 1
	maxFrame       = 1 << 20
)

// ExpireSession ends a client's session on the server side, the way a
// session expiry does: its ephemeral nodes are deleted and its watches
// dropped. The session's own client is disconnected, and when it reconnects
// the server tells it the session has expired (a zkcoord Session ends
// Expired).
//
// It opens a second connection that attaches to the session with its id and
// password (ZooKeeper moves the session to the new connection and closes the
// client's) and then closes the session. The password is the one the server
// returned when the session was created (zkcoord's Session.Password);
// SessionRecorder captures it for clients that do not expose it.
//
// It returns an error wrapping ErrSessionGone when the session did not exist
// (already expired or closed) or the password is wrong. Even then, when the
// session exists, ZooKeeper has already closed the client's connection (it
// does so before checking the password); the client reconnects and keeps
// its session. Running, unpaused servers are tried in order until one
// answers.
func (c *Cluster) ExpireSession(ctx context.Context, sessionID int64, passwd []byte) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	closeSent := false
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		for _, s := range c.all() {
			if !s.Running() || s.Paused() {
				continue
			}
			sent, err := expireVia(ctx, s.Addr(), sessionID, passwd)
			closeSent = closeSent || sent
			switch {
			case err == nil:
				return nil
			case errors.Is(err, ErrSessionGone) && closeSent:
				// An earlier attempt's close went through but its
				// reply was lost.
				return nil
			case errors.Is(err, ErrSessionGone):
				return fmt.Errorf("zkserver: expiring session 0x%x: %w", sessionID, err)
			case errors.Is(err, errNotServingConnect):
				lastErr = err
				continue // e.g. a server without quorum: try the next one
			}
			// Connection lost mid-way, most likely because the session's
			// own client reconnected and took the session back. Retry.
			lastErr = err
			if ctx.Err() != nil {
				return fmt.Errorf("zkserver: expiring session 0x%x: %w", sessionID, lastErr)
			}
		}
		if lastErr == nil {
			return errors.New("zkserver: expiring session: no running server")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zkserver: expiring session 0x%x: %w (%v)", sessionID, lastErr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("zkserver: expiring session 0x%x: %w", sessionID, lastErr)
}

var errNotServingConnect = errors.New("zkserver: server closed the connection before answering the connect request")

// expireVia attaches to the session through addr and closes it. sent reports
// whether the close request was written.
func expireVia(ctx context.Context, addr string, sessionID int64, passwd []byte) (sent bool, err error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd (buffer), readOnly.
	var req bytes.Buffer
	put := func(v any) { _ = binary.Write(&req, binary.BigEndian, v) }
	put(int32(0))
	put(int64(0))
	put(int32(30000))
	put(sessionID)
	put(int32(len(passwd)))
	req.Write(passwd)
	put(false)
	if err := writeFrame(conn, req.Bytes()); err != nil {
		return false, err
	}

	resp, err := readFrame(conn)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return false, errNotServingConnect
		}
		return false, err
	}
	// ConnectResponse: protocolVersion, timeOut, sessionId, passwd, [readOnly].
	if len(resp) < 16 {
		return false, fmt.Errorf("zkserver: short connect response (%d bytes)", len(resp))
	}
	if id := int64(binary.BigEndian.Uint64(resp[8:16])); id == 0 {
		return false, ErrSessionGone
	} else if id != sessionID {
		return false, fmt.Errorf("zkserver: server attached to session 0x%x, want 0x%x", id, sessionID)
	}

	// closeSession: RequestHeader{xid, type} and no body.
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[0:4], uint32(closeXid))
	op := int32(opCloseSession)
	binary.BigEndian.PutUint32(hdr[4:8], uint32(op))
	if err := writeFrame(conn, hdr[:]); err != nil {
		return false, err
	}
	for {
		reply, err := readFrame(conn)
		if err != nil {
			return true, err
		}
		// ReplyHeader: xid, zxid, err.
		if len(reply) < 16 {
			return true, fmt.Errorf("zkserver: short reply (%d bytes)", len(reply))
		}
		if int32(binary.BigEndian.Uint32(reply[0:4])) != closeXid {
			continue // a notification or the like
		}
		if code := int32(binary.BigEndian.Uint32(reply[12:16])); code != 0 {
			return true, fmt.Errorf("zkserver: closeSession failed with ZooKeeper error code %d", code)
		}
		return true, nil
	}
}

func writeFrame(w io.Writer, payload []byte) error {
	buf := make([]byte, 4+len(payload))
	binary.BigEndian.PutUint32(buf, uint32(len(payload)))
	copy(buf[4:], payload)
	_, err := w.Write(buf)
	return err
}

func readFrame(r io.Reader) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(l[:])
	if n > maxFrame {
		return nil, fmt.Errorf("zkserver: frame of %d bytes is too large", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// SessionRecorder is a dialer for ZooKeeper clients that records the session
// id and password from each connect response the server sends, so a program can
// pass them to Cluster.ExpireSession. Its Dial method has the signature of
// zkcoord's Config.Dialer (and of go-zookeeper's zk.Dialer):
//
//	rec := zkserver.NewSessionRecorder(nil)
//	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: c.Servers(), Dialer: rec.Dial})
//	...
//	id, passwd := rec.Session()
//	err = c.ExpireSession(ctx, id, passwd)
//
// It is safe for concurrent use.
type SessionRecorder struct {
	dial func(network, address string, timeout time.Duration) (net.Conn, error)

	mu      sync.Mutex
	id      int64
	passwd  []byte
	changed chan struct{} // closed and replaced on every recorded response
}

// NewSessionRecorder returns a recorder whose Dial uses dial to open
// connections (for instance one doing TLS); nil means net.DialTimeout.
func NewSessionRecorder(dial func(network, address string, timeout time.Duration) (net.Conn, error)) *SessionRecorder {
	if dial == nil {
		dial = net.DialTimeout
	}
	return &SessionRecorder{dial: dial, changed: make(chan struct{})}
}

// Dial opens a connection that records the first frame the server sends,
// which is the connect response.
func (r *SessionRecorder) Dial(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := r.dial(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, rec: r}, nil
}

// Session returns the session id and password of the last connect
// response seen (zero and nil before the first one; id zero after the
// server reported the session expired).
func (r *SessionRecorder) Session() (id int64, passwd []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id, bytes.Clone(r.passwd)
}

// WaitSession waits until a connect response with a non-zero session id has
// been recorded and returns it.
func (r *SessionRecorder) WaitSession(ctx context.Context) (id int64, passwd []byte, err error) {
	for {
		r.mu.Lock()
		id, passwd, changed := r.id, bytes.Clone(r.passwd), r.changed
		r.mu.Unlock()
		if id != 0 {
			return id, passwd, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		}
	}
}

func (r *SessionRecorder) record(frame []byte) {
	// protocolVersion int32, timeOut int32, sessionId int64, passwd buffer.
	if len(frame) < 20 {
		return
	}
	id := int64(binary.BigEndian.Uint64(frame[8:16]))
	n := int32(binary.BigEndian.Uint32(frame[16:20]))
	var pw []byte
	if n > 0 && int(n) <= len(frame)-20 {
		pw = bytes.Clone(frame[20 : 20+n])
	}
	r.mu.Lock()
	r.id, r.passwd = id, pw
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// recordingConn copies the bytes of the first server frame aside. Only the
// client's receive loop reads from it, so buf needs no lock.
type recordingConn struct {
	net.Conn
	rec  *SessionRecorder
	buf  []byte
	done bool
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.buf = append(c.buf, p[:n]...)
		if len(c.buf) >= 4 {
			l := int(binary.BigEndian.Uint32(c.buf[:4]))
			if l > maxFrame {
				c.done, c.buf = true, nil
			} else if len(c.buf) >= 4+l {
				c.done = true
				c.rec.record(c.buf[4 : 4+l])
				c.buf = nil
			}
		}
	}
	return n, err
}
