package zkconn

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// conn is one TCP connection of the session, after its handshake: a
// writer goroutine that takes requests from the client's queue in order
// and writes them, pinging when idle, and a reader goroutine that reads
// replies and events and hands them, in the order read, to the
// dispatcher. Either stops the connection on an error; the client's loop
// then collects what was left in flight.
type conn struct {
	c           *Client
	nc          net.Conn
	fr          *wire.FrameReader
	opened      time.Time // when the handshake completed
	readTimeout time.Duration
	pingEvery   time.Duration

	stop     chan struct{} // closed by shutdown
	stopOnce sync.Once
	errMu    sync.Mutex
	err      error // the first failure
	authFail bool

	mu      sync.Mutex
	pending []*request  // written, awaiting replies, in write order
	pings   []time.Time // write times of pings awaiting replies
}

// shutdown stops the connection because of err (the first one is kept).
func (cn *conn) shutdown(err error) {
	cn.errMu.Lock()
	if cn.err == nil {
		cn.err = err
	}
	cn.errMu.Unlock()
	cn.stopOnce.Do(func() {
		close(cn.stop)
		cn.nc.Close()
	})
}

func (cn *conn) failure() error {
	cn.errMu.Lock()
	defer cn.errMu.Unlock()
	return cn.err
}

// nextXid returns the next ordinary xid: 1 up to MaxInt32, then 1 again.
func (cn *conn) nextXid() int32 {
	cn.c.xid++
	if cn.c.xid <= 0 {
		cn.c.xid = 1
	}
	return cn.c.xid
}

// writeLoop writes prime (auth and re-armed watches) and then the
// client's queue, in order, until the connection stops. It pings when
// nothing was written for pingEvery.
func (cn *conn) writeLoop(auth []wire.AuthPacket, prime []*request) {
	for i := range auth {
		h := wire.RequestHeader{Xid: wire.XidAuth, Type: wire.OpAuth}
		if !cn.writeFrame(&h, &auth[i]) {
			cn.keepForLoss(prime)
			return
		}
	}
	for _, r := range prime {
		cn.write(r)
	}
	ping := time.NewTimer(cn.pingEvery)
	defer ping.Stop()
	for {
		select {
		case <-cn.stop:
			return
		case r := <-cn.c.queue:
			if !r.state.CompareAndSwap(stateQueued, stateWritten) {
				continue // its caller gave up: never written
			}
			cn.write(r)
		case <-ping.C:
			now := time.Now()
			cn.mu.Lock()
			cn.pings = append(cn.pings, now)
			cn.mu.Unlock()
			h := wire.RequestHeader{Xid: wire.XidPing, Type: wire.OpPing}
			cn.writeFrame(&h)
		}
		ping.Reset(cn.pingEvery)
	}
}

// keepForLoss puts the client's own requests, not written because the
// connection failed first, where the loss answers them.
func (cn *conn) keepForLoss(rs []*request) {
	cn.mu.Lock()
	cn.pending = append(cn.pending, rs...)
	cn.mu.Unlock()
}

// write writes a claimed request, putting it in pending first so that its
// reply finds it. A request too large to send is answered at once.
func (cn *conn) write(r *request) {
	if !r.internal {
		r.xid = cn.nextXid()
	}
	h := wire.RequestHeader{Xid: r.xid, Type: r.op}
	recs := []wire.Encodable{&h}
	if r.body != nil {
		recs = append(recs, r.body)
	}
	frame, err := wire.AppendFrame(nil, cn.c.cfg.MaxRequest, recs...)
	if err != nil {
		// Never written: the caller may fix the request and send it
		// again (unless it gave up meanwhile, and was told less).
		if r.state.CompareAndSwap(stateWritten, stateCancelled) {
			r.done <- result{err: notSent(err)}
		}
		return
	}
	r.sent = time.Now()
	cn.mu.Lock()
	cn.pending = append(cn.pending, r)
	cn.mu.Unlock()
	cn.writeBytes(frame)
}

func (cn *conn) writeFrame(recs ...wire.Encodable) bool {
	frame, err := wire.AppendFrame(nil, 0, recs...)
	if err != nil {
		cn.shutdown(err)
		return false
	}
	return cn.writeBytes(frame)
}

func (cn *conn) writeBytes(frame []byte) bool {
	cn.nc.SetWriteDeadline(time.Now().Add(cn.readTimeout))
	if _, err := cn.nc.Write(frame); err != nil {
		cn.shutdown(err)
		return false
	}
	return true
}

// errAuthFailed is the connection's end when the server refused an
// AuthPacket.
var errAuthFailed = fmt.Errorf("zkconn: authentication refused: %w", wire.ErrAuthFailed)

// replyHeaderLen is the length of a ReplyHeader: xid, zxid and err.
const replyHeaderLen = 4 + 8 + 4

// readLoop reads frames until the connection fails or goes silent for
// readTimeout, handing replies and events to the dispatcher in the order
// read.
func (cn *conn) readLoop() {
	for {
		cn.nc.SetReadDeadline(time.Now().Add(cn.readTimeout))
		b, err := cn.fr.ReadFrame()
		// A reply too large to accept fails its own request, not the
		// connection: its header is kept and the rest skipped.
		tooLarge := err
		if errors.Is(err, wire.ErrFrameTooLarge) {
			b, err = cn.fr.Discard(replyHeaderLen)
		} else {
			tooLarge = nil
		}
		if err != nil {
			cn.shutdown(err)
			return
		}
		d := wire.NewDecoder(b)
		var h wire.ReplyHeader
		h.Decode(d)
		if d.Err() != nil {
			cn.shutdown(d.Err())
			return
		}
		if tooLarge != nil && (h.Xid == wire.XidNotification || h.Xid == wire.XidPing || h.Xid == wire.XidAuth) {
			cn.shutdown(tooLarge)
			return
		}
		switch h.Xid {
		case wire.XidNotification:
			var ev wire.WatcherEvent
			ev.Decode(d)
			if d.Err() != nil {
				cn.shutdown(d.Err())
				return
			}
			cn.c.post(item{event: Event{Type: ev.Type, State: ev.State, Path: ev.Path, Zxid: h.Zxid}})
		case wire.XidPing:
			cn.mu.Lock()
			if len(cn.pings) == 0 {
				cn.mu.Unlock()
				cn.shutdown(errors.New("zkconn: a ping reply without a ping"))
				return
			}
			sent := cn.pings[0]
			cn.pings = cn.pings[1:]
			cn.mu.Unlock()
			cn.c.renewed(sent)
		case wire.XidAuth:
			if h.Err != wire.OK {
				cn.errMu.Lock()
				cn.authFail = true
				cn.errMu.Unlock()
				cn.shutdown(errAuthFailed)
				return
			}
		default:
			cn.mu.Lock()
			if len(cn.pending) == 0 || cn.pending[0].xid != h.Xid {
				cn.mu.Unlock()
				cn.shutdown(fmt.Errorf("zkconn: reply with xid %d out of order", h.Xid))
				return
			}
			r := cn.pending[0]
			cn.pending = cn.pending[1:]
			cn.mu.Unlock()
			if h.Zxid > 0 {
				cn.c.sawZxid(h.Zxid)
			}
			cn.c.renewed(r.sent)
			it := item{req: r, hdr: h, body: append([]byte(nil), b[len(b)-d.Len():]...), tooLarge: tooLarge}
			if r.watch == nil && r.removes == nil && cn.c.undelivered.Load() == 0 {
				// Nothing read before this reply waits for the
				// dispatcher, and the reply touches no watch: answer
				// it here, one goroutine hop sooner.
				cn.c.answer(it)
			} else {
				cn.c.post(it)
			}
		}
	}
}

// takePending returns what was written and not answered, once both
// goroutines have stopped.
func (cn *conn) takePending() []*request {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	p := cn.pending
	cn.pending = nil
	return p
}
