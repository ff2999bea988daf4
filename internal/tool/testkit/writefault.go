package testkit

import (
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"time"
)

// ZooKeeper request opcodes, for WriteFault.FailNext.
const (
	OpCreate  int32 = 1 // also matches create2, the create that returns a Stat
	OpDelete  int32 = 2
	OpExists  int32 = 3
	OpGetData int32 = 4
	OpSetData int32 = 5
	OpMulti   int32 = 14
)

const opCreate2 int32 = 15

// WriteFault is a Config.Dialer whose connections can make one chosen
// request fail as a write to a broken socket does: the connection's write
// side is shut down under the request, so the kernel refuses it and the
// raw error (EPIPE in a *net.OpError) reaches the client's writer. The zero value is ready to use.
type WriteFault struct {
	mu   sync.Mutex
	op   int32
	path string
	hit  chan struct{}
}

// FailNext arms the fault for the next request with opcode op whose path
// (as sent, chroot included) ends with path. The returned channel is
// closed once a request has failed that way.
func (f *WriteFault) FailNext(op int32, path string) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.op, f.path, f.hit = op, path, make(chan struct{})
	return f.hit
}

// Dial opens a TCP connection with the fault attached.
func (f *WriteFault) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &faultConn{TCPConn: c.(*net.TCPConn), f: f}, nil
}

// matches reports, and disarms, the fault for request frame p.
func (f *WriteFault) matches(p []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hit == nil || len(p) < 16 {
		return false
	}
	op := int32(binary.BigEndian.Uint32(p[8:]))
	if op == opCreate2 {
		op = OpCreate
	}
	if op != f.op {
		return false
	}
	n := int(int32(binary.BigEndian.Uint32(p[12:])))
	if n < 0 || 16+n > len(p) || !strings.HasSuffix(string(p[16:16+n]), f.path) {
		return false
	}
	close(f.hit)
	f.hit = nil
	return true
}

type faultConn struct {
	*net.TCPConn
	f       *WriteFault
	greeted bool // the connect request, which has no opcode, has been sent
}

// Write sends p, unless p is the armed request: then the socket's write
// side is shut down first and the kernel's error returned.
func (c *faultConn) Write(p []byte) (int, error) {
	if c.greeted && c.f.matches(p) {
		_ = c.TCPConn.CloseWrite()
	}
	c.greeted = true
	return c.TCPConn.Write(p)
}
