package zkconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/wire"
)

// Config says how to reach the ensemble and what session to ask for.
type Config struct {
	// Servers are "host:port" addresses. Host names are resolved again
	// on every connection attempt (each attempt dials the name).
	Servers []string
	// SessionTimeout is the session timeout asked for; the server
	// negotiates it into its bounds (see Client.SessionTimeout).
	SessionTimeout time.Duration
	// Auth is sent, in order, on every connection before any other
	// request (for digest: Scheme "digest", Auth "user:password").
	Auth []wire.AuthPacket
	// SASL, if set, authenticates every connection before Auth is sent.
	SASL *SASL
	// Dial opens a connection (a TLS dialer, a test's proxy); nil uses
	// net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxQueued bounds the requests issued and not yet written: a call
	// beyond it waits, bounded by its context (default 1024).
	MaxQueued int
	// MaxRequest is the largest request frame sent (default
	// wire.MaxBuffer, the server's default jute.maxbuffer); a larger
	// request fails, not sent, with an error wrapping
	// wire.ErrFrameTooLarge.
	MaxRequest int
	// MaxReply is the largest reply frame accepted (default
	// wire.DefaultMaxFrame).
	MaxReply int
	// PingEvery, if set, gives the ping interval for a negotiated session
	// timeout: a ping is written when nothing else was written for that
	// long. Default: a third of the read timeout (2T/9); ClientCnxn pings
	// after half its read timeout less up to a second.
	PingEvery func(timeout time.Duration) time.Duration
	// Failed, if set, hears of every connection attempt that failed, with
	// the server and the reason, as it happens (on the client's goroutine:
	// it must not block).
	Failed func(server string, err error)
}

// Client is one ZooKeeper session, over a succession of connections to
// the servers of Config. It re-attaches to the same session after a
// disconnect for as long as the server keeps the session; when the
// server says it expired, or Close ends it, the Client is over for good
// (Done closes, Err says why) and never opens another session. Its
// methods are safe for concurrent use.
type Client struct {
	cfg Config

	queue  chan *request
	events *fifo.Queue[item]
	// undelivered counts the items posted and not yet handled by the
	// dispatcher; with none, the reader may answer a plain reply itself.
	undelivered atomic.Int64
	watches     *registry
	session     *Watch

	lifetime context.Context
	stop     context.CancelFunc
	closing  atomic.Bool
	done     chan struct{}
	err      error // set before done is closed
	wg       sync.WaitGroup

	xid int32 // the writer's, one connection at a time, and the SASL exchange's before it

	mu        sync.Mutex
	sessionID int64
	passwd    []byte
	timeout   time.Duration // negotiated
	lastZxid  int64
	renewal   time.Time
	connected bool
	server    string
	cn        *conn    // the connection up, nil between connections
	servers   []string // shuffled; tried in turn from next (servers.go)
	next      int
}

// Dial opens a new session on one of the servers, trying them in a
// shuffled order until one answers or ctx ends, and returns a Client
// that keeps it.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.Servers) == 0 {
		return nil, errors.New("zkconn: no servers")
	}
	if cfg.SessionTimeout <= 0 {
		return nil, errors.New("zkconn: the session timeout must be positive")
	}
	if cfg.Dial == nil {
		var d net.Dialer
		cfg.Dial = d.DialContext
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = 1024
	}
	c := &Client{
		cfg:     cfg,
		queue:   make(chan *request, cfg.MaxQueued),
		events:  fifo.New[item](),
		watches: newRegistry(),
		done:    make(chan struct{}),
		passwd:  make([]byte, wire.PasswordLen),
		timeout: cfg.SessionTimeout,
	}
	c.servers = shuffled(cfg.Servers)
	c.session = newWatch(KindSession, "")
	c.watches.add(c.session)
	cn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.lifetime, c.stop = context.WithCancel(context.Background())
	c.wg.Add(2)
	go c.dispatch()
	go c.run(cn)
	return c, nil
}

// Session returns the connection events of the session, like ZooKeeper's
// default watcher: SyncConnected on each (re)connection, Disconnected on
// each loss, and a last Expired, AuthFailed or Closed.
func (c *Client) Session() *Watch { return c.session }

// SessionID returns the session's id.
func (c *Client) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// Password returns the session's password.
func (c *Client) Password() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.passwd...)
}

// SessionTimeout returns the timeout the server negotiated (the one asked
// for until the first handshake).
func (c *Client) SessionTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

// LastRenewal returns the write time of the last request answered (pings
// and the handshake included): the latest moment at which the session is known to have been
// alive on the server. The session cannot expire before LastRenewal plus
// SessionTimeout.
func (c *Client) LastRenewal() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.renewal
}

// LastZxid returns the largest zxid seen in a reply.
func (c *Client) LastZxid() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastZxid
}

// Connected reports whether a connection is up, and to which server.
func (c *Client) Connected() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server, c.connected
}

// Done is closed when the client has ended: the session expired, an
// AuthPacket was refused, or Close.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the client ended (wire.ErrSessionExpired,
// wire.ErrAuthFailed, ErrClosed), or nil before Done is closed.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func (c *Client) renewed(sent time.Time) {
	c.mu.Lock()
	if sent.After(c.renewal) {
		c.renewal = sent
	}
	c.mu.Unlock()
}

func (c *Client) sawZxid(z int64) {
	c.mu.Lock()
	if z > c.lastZxid {
		c.lastZxid = z
	}
	c.mu.Unlock()
}

// errExpired is the end of a session the server no longer has.
var errExpired = fmt.Errorf("zkconn: the server says the session is gone: %w", wire.ErrSessionExpired)

// run keeps the session: it serves a connection until it fails, collects
// what it left unanswered, and re-attaches, until the session expires or
// the client is closed.
func (c *Client) run(cn *conn) {
	defer c.wg.Done()
	rearmed := false
	var endErr error
	endState := wire.StateClosed
	for {
		c.serve(cn, rearmed)
		loss := connLoss(cn.failure())
		cn.errMu.Lock()
		authFail := cn.authFail
		cn.errMu.Unlock()
		c.mu.Lock()
		c.connected, c.cn = false, nil
		c.mu.Unlock()
		ack := make(chan struct{})
		c.post(item{change: true, state: wire.StateDisconnected, err: loss,
			inflight: cn.takePending(), unsent: c.drain(), ack: ack})
		<-ack // the watch tables are final for the next connection
		if authFail {
			endErr, endState = errAuthFailed, wire.StateAuthFailed
			break
		}
		if c.closing.Load() || c.lifetime.Err() != nil {
			endErr = ErrClosed
			break
		}
		next, err := c.connect(c.lifetime)
		if err != nil {
			switch {
			case errors.Is(err, wire.ErrSessionExpired):
				endErr, endState = err, wire.StateExpired
			case errors.Is(err, wire.ErrAuthFailed):
				endErr, endState = err, wire.StateAuthFailed
			default:
				endErr = ErrClosed
			}
			break
		}
		cn, rearmed = next, true
	}
	c.err = endErr
	ack := make(chan struct{})
	c.post(item{change: true, end: true, state: endState, err: endErr, unsent: c.drain(), ack: ack})
	<-ack
	close(c.done)
	// A call may have queued after the last drain; it sees done.
}

// drain takes every request queued and not yet written.
func (c *Client) drain() []*request {
	var out []*request
	for {
		select {
		case r := <-c.queue:
			out = append(out, r)
		default:
			return out
		}
	}
}

// serve runs a connection's writer and reader until either fails or the
// client stops.
func (c *Client) serve(cn *conn, rearm bool) {
	c.mu.Lock()
	c.connected, c.cn = true, cn
	lastZxid := c.lastZxid
	c.mu.Unlock()
	var prime []*request
	if rearm {
		prime = c.watches.rearm(lastZxid)
	}
	c.post(item{change: true, state: wire.StateSyncConnected, rearmed: rearm})
	stop := context.AfterFunc(c.lifetime, func() { cn.shutdown(ErrClosed) })
	defer stop()
	written := make(chan struct{})
	go func() {
		defer close(written)
		cn.writeLoop(c.cfg.Auth, prime)
	}()
	cn.readLoop() // returns once the connection is shut down, by either side
	cn.shutdown(errors.New("zkconn: the reader stopped"))
	<-written
}

// Close ends the session: when connected, it sends closeSession after
// every request issued before it and waits for its reply until ctx ends;
// then it stops the connection and every goroutine. Calls after Close
// fail with ErrClosed; every watch receives a last Closed event. Close
// returns the closeSession call's error, or nil.
func (c *Client) Close(ctx context.Context) error {
	if c.closing.Swap(true) {
		<-c.done
		return nil
	}
	var err error
	if _, up := c.Connected(); up {
		_, err = c.do(ctx, newRequest(wire.OpCloseSession, nil, nil))
		if errors.Is(err, wire.ErrSessionExpired) {
			err = nil
		}
	}
	c.stop()
	c.wg.Wait()
	return err
}

// Abandon ends the client without closeSession: the connection is closed
// and the server keeps the session until it expires it, so ephemeral nodes
// outlive the client by up to the session timeout. Calls fail with
// ErrClosed, every watch receives a last Closed event, and every goroutine
// has ended when Abandon returns. After Close or Abandon it only waits.
func (c *Client) Abandon() {
	if c.closing.Swap(true) {
		<-c.done
		return
	}
	c.stop()
	c.wg.Wait()
}

// Reconnect drops the current connection if nothing was heard on it for
// quiet: no reply since it was established or since the last request it
// answered. The client then tries the next server. It reports whether it
// dropped a connection; with none up it does nothing.
func (c *Client) Reconnect(quiet time.Duration) bool {
	c.mu.Lock()
	cn, renewal := c.cn, c.renewal
	c.mu.Unlock()
	if cn == nil {
		return false
	}
	if time.Since(later(cn.opened, renewal)) < quiet {
		return false
	}
	cn.shutdown(errQuiet)
	return true
}

var errQuiet = errors.New("zkconn: no reply on the connection")

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
