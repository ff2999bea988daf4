package wire

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// zkConn is the least client that proves the records against a real
// server: one connection, one request at a time, watch events queued as
// they arrive between replies. It is a test helper, not the client.
type zkConn struct {
	t       *testing.T
	nc      net.Conn
	r       *FrameReader
	w       *FrameWriter
	xid     int32
	session ConnectResponse
	// connectFrame is the ConnectResponse as the server framed it.
	connectFrame []byte
	events       []notification
}

// notification is a watch event with the zxid of its ReplyHeader.
type notification struct {
	Zxid  int64
	Event WatcherEvent
}

// ioTimeout bounds every read and write: a server that does not answer
// fails the test instead of hanging it.
const ioTimeout = 20 * time.Second

// newSession opens a new session through addr.
func newSession(t *testing.T, addr string) *zkConn {
	t.Helper()
	c, err := dialSession(t, addr, ConnectRequest{TimeOut: 10000, Passwd: make([]byte, PasswordLen)})
	if err != nil {
		t.Fatal(err)
	}
	if c.session.SessionID == 0 {
		t.Fatalf("no session: %+v", c.session)
	}
	return c
}

// dialSession connects to addr and sends req, the ConnectRequest.
func dialSession(t *testing.T, addr string, req ConnectRequest) (*zkConn, error) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { nc.Close() })
	c := &zkConn{t: t, nc: nc, r: NewFrameReader(nc, 0), w: NewFrameWriter(nc, 0)}
	nc.SetDeadline(time.Now().Add(ioTimeout))
	if err := c.w.WriteFrame(&req); err != nil {
		return nil, err
	}
	b, err := c.r.ReadFrame()
	if err != nil {
		return nil, err
	}
	c.connectFrame = append([]byte(nil), b...)
	if err := Unmarshal(b, &c.session); err != nil {
		return nil, err
	}
	return c, nil
}

// send writes a request with the given xid.
func (c *zkConn) send(xid int32, op OpCode, req Encodable) {
	c.t.Helper()
	h := RequestHeader{Xid: xid, Type: op}
	recs := []Encodable{&h}
	if req != nil {
		recs = append(recs, req)
	}
	c.nc.SetWriteDeadline(time.Now().Add(ioTimeout))
	if err := c.w.WriteFrame(recs...); err != nil {
		c.t.Fatalf("writing %v: %v", op, err)
	}
}

// read reads frames up to the next reply and returns its ReplyHeader and a
// Decoder for the rest. Watch events on the way are queued; with
// eventsOnly, read returns after the first one instead (ok false).
func (c *zkConn) read(eventsOnly bool) (h ReplyHeader, d *Decoder, ok bool) {
	c.t.Helper()
	for {
		c.nc.SetReadDeadline(time.Now().Add(ioTimeout))
		b, err := c.r.ReadFrame()
		if err != nil {
			c.t.Fatalf("reading a reply: %v", err)
		}
		d = NewDecoder(b)
		h.Decode(d)
		if d.Err() != nil {
			c.t.Fatalf("reply header: %v", d.Err())
		}
		if h.Xid != XidNotification {
			return h, d, true
		}
		n := notification{Zxid: h.Zxid}
		n.Event.Decode(d)
		if d.Err() != nil {
			c.t.Fatalf("watch event: %v", d.Err())
		}
		c.events = append(c.events, n)
		if eventsOnly {
			return h, nil, false
		}
	}
}

// reply reads the reply to xid into resp (when its Err is OK and resp is
// not nil) and returns its header.
func (c *zkConn) reply(xid int32, resp Decodable) ReplyHeader {
	c.t.Helper()
	h, d, _ := c.read(false)
	if h.Xid != xid {
		c.t.Fatalf("reply with xid %d, want %d", h.Xid, xid)
	}
	if h.Err == OK && resp != nil {
		resp.Decode(d)
		if d.Err() != nil {
			c.t.Fatalf("reply record %T: %v", resp, d.Err())
		}
		if d.Len() != 0 {
			c.t.Errorf("reply record %T: %d bytes left over", resp, d.Len())
		}
	}
	return h
}

// call sends a request with the next xid and reads its reply.
func (c *zkConn) call(op OpCode, req Encodable, resp Decodable) ReplyHeader {
	c.t.Helper()
	c.xid++
	c.send(c.xid, op, req)
	return c.reply(c.xid, resp)
}

// must is call for a request that must succeed.
func (c *zkConn) must(op OpCode, req Encodable, resp Decodable) ReplyHeader {
	c.t.Helper()
	h := c.call(op, req, resp)
	if h.Err != OK {
		c.t.Fatalf("%v %+v: %v", op, req, h.Err)
	}
	return h
}

// event returns the next watch event, reading until one arrives.
func (c *zkConn) event() notification {
	c.t.Helper()
	for len(c.events) == 0 {
		if h, _, ok := c.read(true); ok {
			c.t.Fatalf("a reply with xid %d while waiting for a watch event", h.Xid)
		}
	}
	n := c.events[0]
	c.events = c.events[1:]
	return n
}

// closeSession ends the session and checks that the server then closes
// the connection.
func (c *zkConn) closeSession() {
	c.t.Helper()
	c.must(OpCloseSession, nil, nil)
	c.nc.SetReadDeadline(time.Now().Add(ioTimeout))
	if b, err := c.r.ReadFrame(); !errors.Is(err, io.EOF) {
		c.t.Fatalf("after closeSession: frame % x, err %v; want the connection closed", b, err)
	}
}
