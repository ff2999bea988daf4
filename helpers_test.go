package zkcoord_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// sharedServers returns the addresses of the server TestMain started, for
// tests that do not break it.
func sharedServers() []string {
	return strings.Split(os.Getenv(zktest.EnvServers), ",")
}

// connect opens a Session for the test and closes it at the end.
func connect(t *testing.T, cfg zkcoord.Config) *zkcoord.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 6 * time.Second
	}
	s, err := zkcoord.Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// testCtx returns a context that ends after d or when the test ends.
func testCtx(t *testing.T, d time.Duration) context.Context { return testkit.Ctx(t, d) }

// nextState waits for the next state change on w.
func nextState(t *testing.T, w <-chan zkcoord.StateChange, d time.Duration) zkcoord.StateChange {
	t.Helper()
	select {
	case c, ok := <-w:
		if !ok {
			t.Fatalf("state stream closed")
		}
		return c
	case <-time.After(d):
		t.Fatalf("no state change within %v", d)
	}
	panic("unreachable")
}

// faultyDialer sits under a Session's connections. It can refuse new
// connections, and it can swallow the next reply the server sends (a frame
// with a positive xid) and then drop the connection, which is what a client
// sees when a connection dies after the server applied a request but before
// its reply arrived.
type faultyDialer struct {
	refuse    atomic.Bool
	dropReply atomic.Bool
	// expired is set when a server answers a connection with "session
	// expired"; lateDials counts dials after that.
	expired   atomic.Bool
	lateDials atomic.Int32
	dropped   chan struct{} // receives once per swallowed reply

	holdMu sync.Mutex
	hold   chan struct{} // while non-nil, reads wait for it to close
	last   atomic.Pointer[faultyConn]
}

func newFaultyDialer() *faultyDialer {
	return &faultyDialer{dropped: make(chan struct{}, 16)}
}

// stall holds back every byte servers send, on open and new connections,
// until release; requests still reach the servers.
func (d *faultyDialer) stall() {
	d.holdMu.Lock()
	defer d.holdMu.Unlock()
	if d.hold == nil {
		d.hold = make(chan struct{})
	}
}

// release lets held bytes through.
func (d *faultyDialer) release() {
	d.holdMu.Lock()
	defer d.holdMu.Unlock()
	if d.hold != nil {
		close(d.hold)
		d.hold = nil
	}
}

func (d *faultyDialer) held() <-chan struct{} {
	d.holdMu.Lock()
	defer d.holdMu.Unlock()
	return d.hold
}

// handshakingAt reports whether at time t the newest connection was open
// and had sent its connect request without having read the answer.
func (d *faultyDialer) handshakingAt(t time.Time) bool {
	c := d.last.Load()
	if c == nil {
		return false
	}
	before := func(v *atomic.Int64) bool { n := v.Load(); return n != 0 && n < t.UnixNano() }
	return before(&c.wroteAt) && !before(&c.startedAt) && !before(&c.closedAt)
}

func (d *faultyDialer) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	if d.expired.Load() {
		d.lateDials.Add(1)
	}
	if d.refuse.Load() {
		return nil, errors.New("test: connection refused")
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &faultyConn{Conn: c, d: d, closed: make(chan struct{})}, nil
}

type faultyConn struct {
	net.Conn
	d       *faultyDialer
	mu      sync.Mutex
	pending []byte      // whole frames ready for the reader
	started atomic.Bool // the connect response has passed
	// plain is set when the first write is a four-letter word (the
	// Session asks a server for its "conf" on the same dialer): its
	// answer is text, not frames, and passes as it is.
	plain     atomic.Bool
	closed    chan struct{}
	closeOnce sync.Once
	// Unix nanoseconds of the first write, the connect response passing,
	// and Close; 0 until then.
	wroteAt, startedAt, closedAt atomic.Int64
}

func (c *faultyConn) Close() error {
	c.closeOnce.Do(func() {
		c.closedAt.Store(time.Now().UnixNano())
		close(c.closed)
	})
	return c.Conn.Close()
}

func (c *faultyConn) Write(p []byte) (int, error) {
	if c.wroteAt.CompareAndSwap(0, time.Now().UnixNano()) {
		if fourLetterWord(p) {
			c.plain.Store(true)
		} else {
			c.d.last.Store(c)
		}
	}
	return c.Conn.Write(p)
}

// fourLetterWord reports whether p is a four-letter command such as
// "conf"; a session's first write is a frame, whose length starts with a
// zero byte.
func fourLetterWord(p []byte) bool {
	if len(p) != 4 {
		return false
	}
	for _, b := range p {
		if b < 'a' || b > 'z' {
			return false
		}
	}
	return true
}

// Read passes whole frames through, except a swallowed reply, and holds
// them back while the dialer stalls.
func (c *faultyConn) Read(p []byte) (int, error) {
	if c.plain.Load() {
		return c.Conn.Read(p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) == 0 {
		if h := c.d.held(); h != nil {
			select {
			case <-h:
			case <-c.closed:
				return 0, net.ErrClosed
			}
		}
		frame, err := readFrame(c.Conn)
		if err != nil {
			return 0, err
		}
		if c.started.Load() && c.d.dropReply.Load() && len(frame) >= 8 && int32(binary.BigEndian.Uint32(frame[4:])) > 0 {
			c.d.dropReply.Store(false)
			c.d.dropped <- struct{}{}
			c.Conn.Close()
			return 0, io.ErrUnexpectedEOF
		}
		if !c.started.Load() && len(frame) >= 20 && binary.BigEndian.Uint64(frame[12:]) == 0 {
			c.d.expired.Store(true) // connect response with session id 0
		}
		if !c.started.Swap(true) {
			c.startedAt.Store(time.Now().UnixNano())
		}
		c.pending = frame
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func readFrame(r io.Reader) ([]byte, error) {
	head := make([]byte, 4)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	frame := make([]byte, 4+binary.BigEndian.Uint32(head))
	copy(frame, head)
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}
