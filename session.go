package zkcoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkcoord/zkcoord/internal/fifo"
)

// Session owns one ZooKeeper session. Create it with Connect; it is safe for
// concurrent use. See the package documentation for its life cycle.
type Session struct {
	cfg  Config
	root chroot
	log  *slog.Logger
	conn *zk.Conn

	epoch    time.Time    // monotonic reference for lastRecv
	lastRecv atomic.Int64 // ns since epoch: send time of the last request answered
	gate     atomic.Bool  // set once no new connection may be opened

	linkMu sync.Mutex
	link   *link
	hs     handshake // of the most recent connection

	written writeWatch // requests someone waits to see written

	inbox     *fifo.Queue[zk.Event]
	closeReq  chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	state   State
	server  string
	err     error
	subs    map[*fifo.Queue[StateChange]]struct{}
	id      int64
	timeout time.Duration
	passwd  []byte
	// expiredAt is when the server was heard to report the session gone
	// (on the Session's clock), 0 before.
	expiredAt time.Duration

	ready     chan struct{} // closed once the first session is established
	done      chan struct{} // closed when the Session ends
	ctx       context.Context
	cancel    context.CancelFunc
	finished  chan struct{} // closed when every goroutine of the Session ended
	zkStopped chan struct{} // closed when go-zookeeper's goroutines ended

	spawnMu  sync.Mutex
	stopping bool
	tasks    sync.WaitGroup
}

// Connect opens a ZooKeeper session and waits until it is established, the
// credentials in cfg.Auth are added and cfg.Chroot exists. If ctx ends first,
// everything is torn down and ctx's error returned.
//
// In the background it then reads the server's tickTime and syncLimit (the
// conf four-letter word) and logs a warning if a follower cut off from the
// ZooKeeper leader could keep the session answered until after the leader
// expired it (see ensembleRisk); a server that refuses is not an error.
func Connect(ctx context.Context, cfg Config) (*Session, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Session{
		cfg:       cfg,
		root:      chroot(cfg.Chroot),
		log:       cfg.Logger,
		epoch:     time.Now(),
		inbox:     fifo.New[zk.Event](),
		closeReq:  make(chan struct{}),
		subs:      make(map[*fifo.Queue[StateChange]]struct{}),
		ready:     make(chan struct{}),
		done:      make(chan struct{}),
		finished:  make(chan struct{}),
		zkStopped: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	conn, events, err := zk.Connect(cfg.Servers, cfg.SessionTimeout,
		zk.WithDialer(s.dial),
		zk.WithEventCallback(s.onEvent),
		zk.WithLogger(zkLogger{s.log}),
		zk.WithLogInfo(false),
		zk.WithMaxBufferSize(16<<20),
	)
	if err != nil {
		return nil, fmt.Errorf("zkcoord: connect: %w", err)
	}
	s.conn = conn
	go func() { // go-zookeeper drops events when this channel is full; drain it
		for range events {
		}
		close(s.zkStopped)
	}()
	go s.run()

	select {
	case <-s.ready:
	case <-s.done:
		<-s.finished
		return nil, s.Err()
	case <-ctx.Done():
		s.Close(context.Background())
		return nil, fmt.Errorf("zkcoord: connect to %v: %w", cfg.Servers, ctx.Err())
	}
	if err := s.setup(ctx); err != nil {
		s.Close(context.Background())
		return nil, err
	}
	server := s.Server()
	s.spawn(func() { s.checkEnsemble(server) })
	return s, nil
}

// setup adds credentials and creates the chroot.
func (s *Session) setup(ctx context.Context) error {
	for _, a := range s.cfg.Auth {
		a := a
		_, err := retryCall(s, ctx, none(func() error { return s.conn.AddAuth(a.Scheme, []byte(a.Credential)) }))
		if err != nil {
			return fmt.Errorf("zkcoord: add %s auth: %w", a.Scheme, err)
		}
	}
	if s.cfg.Chroot != "" {
		if err := s.ensure(ctx, chroot(""), s.cfg.Chroot, 0); err != nil {
			return fmt.Errorf("zkcoord: create chroot %s: %w", s.cfg.Chroot, err)
		}
	}
	return nil
}

// ID returns the ZooKeeper session id.
func (s *Session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Password returns the session password. Together with ID it lets a test
// harness expire the session from the server side.
func (s *Session) Password() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.passwd...)
}

// Timeout returns the session timeout negotiated with the server.
func (s *Session) Timeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timeout
}

// LostAfter returns how long after the last server response the Session
// declares itself Lost.
func (s *Session) LostAfter() time.Duration {
	return time.Duration(float64(s.Timeout()) * s.cfg.LostAfter)
}

// ExpiryDeadline returns the earliest time at which the server may expire
// the session: the send time of the last request it answered plus the
// negotiated timeout. The time carries a monotonic reading, so it is immune
// to wall-clock changes. Whatever an owner must stop before the next owner
// may start has to be stopped before this deadline, whatever grace was
// asked; while the Session is connected the deadline keeps moving forward.
// Once the server has reported the session expired, the deadline is no
// later than that report. Before the session is established it returns the
// zero Time.
func (s *Session) ExpiryDeadline() time.Time {
	select {
	case <-s.ready:
	default:
		return time.Time{}
	}
	s.mu.Lock()
	at := time.Duration(s.lastRecv.Load()) + s.timeout
	if s.expiredAt > 0 {
		at = min(at, s.expiredAt)
	}
	s.mu.Unlock()
	return s.epoch.Add(at)
}

// Server returns the address of the server the session last used.
func (s *Session) Server() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server
}

// State returns the current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Done is closed when the Session ends: Lost, Expired or Closed.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns nil while the Session lives, then the cause of its end,
// wrapping ErrSessionLost, ErrSessionExpired, ErrSessionClosed or
// ErrAuthFailed.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Context returns a context that is cancelled when the Session ends; its
// cause is Err().
func (s *Session) Context() context.Context { return s.ctx }

// Config returns the Session's configuration, with defaults filled in.
func (s *Session) Config() Config { return s.cfg }

// Logger returns the Session's logger (silent unless Config.Logger was set).
func (s *Session) Logger() *slog.Logger { return s.log }

// Watch returns a channel that first receives the current state and then
// every transition, in order, none dropped, until the terminal one, after
// which it is closed. It is also closed when ctx ends; cancel ctx when you
// stop reading.
func (s *Session) Watch(ctx context.Context) <-chan StateChange {
	q := fifo.New[StateChange]()
	out := make(chan StateChange)
	s.mu.Lock()
	q.Push(StateChange{State: s.state, At: time.Now(), Server: s.server, Err: s.err})
	terminal := s.state.Terminal()
	if !terminal {
		s.subs[q] = struct{}{}
	}
	s.mu.Unlock()
	go q.Forward(ctx, out, func(c StateChange) bool { return c.State.Terminal() }, func() {
		s.mu.Lock()
		delete(s.subs, q)
		s.mu.Unlock()
	})
	return out
}

// Close ends the session: the server deletes its ephemeral nodes at once.
// It waits, bounded by ctx, until every goroutine of the Session has ended.
// Close on an ended Session only waits for that.
func (s *Session) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.closeReq) })
	select {
	case <-s.finished:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// now is the Session's monotonic clock.
func (s *Session) now() time.Duration { return time.Since(s.epoch) }

// heard records server contact: a reply to a request sent at the given
// time, so the server renewed the session no earlier than that.
func (s *Session) heard(sentAt time.Duration) {
	for {
		old := s.lastRecv.Load()
		if int64(sentAt) <= old || s.lastRecv.CompareAndSwap(old, int64(sentAt)) {
			return
		}
	}
}

func (s *Session) silence() time.Duration {
	return time.Since(s.epoch) - time.Duration(s.lastRecv.Load())
}

// handshook records a connect response read by the current link.
func (s *Session) handshook(h handshake) {
	s.linkMu.Lock()
	s.hs = h
	s.linkMu.Unlock()
}

// onEvent runs on go-zookeeper's connection goroutine: it must not block
// and must not call back into the Conn.
func (s *Session) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	if ev.State == zk.StateExpired || ev.State == zk.StateAuthFailed {
		// Close the gate before go-zookeeper redials for a new session.
		s.gate.Store(true)
	}
	s.inbox.Push(ev)
}

// run is the single goroutine that owns the Session's state machine.
func (s *Session) run() {
	defer close(s.finished)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-s.inbox.Ready():
			for _, ev := range s.inbox.PopAll() {
				s.handle(ev)
			}
		case <-timer.C:
		case <-s.closeReq:
			s.end(Closed, ErrSessionClosed, "closed by its owner")
		}
		if s.State().Terminal() {
			s.teardown()
			return
		}
		next := s.checkSilence()
		if s.State().Terminal() {
			s.teardown()
			return
		}
		timer.Reset(next)
	}
}

// heartbeat keeps the record of server contact fresh. go-zookeeper pings
// only after T/3 without a request, so a single late ping reply would bring
// the Session close to Lost; a cheap read every T/6 of quiet halves that,
// and one every quarter of the Lost threshold keeps a small LostAfter from
// ending a healthy Session.
func (s *Session) heartbeat() {
	every := heartbeatEvery(s.Timeout(), s.cfg.LostAfter)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if st := s.State(); s.silence() >= every && (st == Connected || st == Reconnected) {
			_, _, _ = s.conn.Exists("/") // returns on reply, disconnect or close
		}
		t.Reset(every)
	}
}

// heartbeatEvery returns how much quiet makes the Session ask the server
// for a reply, for negotiated timeout t.
func heartbeatEvery(t time.Duration, lostAfter float64) time.Duration {
	lost := time.Duration(float64(t) * lostAfter)
	return max(min(t/6, lost/4), minHeartbeat)
}

// minHeartbeat bounds how often the Session asks the server for a reply.
const minHeartbeat = 20 * time.Millisecond

// thresholds returns how much silence makes the Session Suspended, Lost, and
// how long a connection may go without a reply before it is dropped to try
// again, perhaps on another server.
func (s *Session) thresholds() (suspend, lost, redial time.Duration) {
	t := s.Timeout()
	lost = time.Duration(float64(t) * s.cfg.LostAfter)
	suspend = t / 2
	if suspend > lost*3/4 {
		suspend = lost * 3 / 4
	}
	redial = max(t/10, 50*time.Millisecond)
	return suspend, lost, redial
}

// checkSilence declares Suspended or Lost from the time since the last
// server response, and returns when to look again.
func (s *Session) checkSilence() time.Duration {
	select {
	case <-s.ready:
	default:
		return time.Hour // no session yet: nothing to measure
	}
	suspend, lost, redial := s.thresholds()
	quiet := s.silence()
	if quiet >= lost {
		s.end(Lost, ErrSessionLost, fmt.Sprintf("no server response for %v", quiet.Round(time.Millisecond)))
		return 0
	}
	if quiet < suspend {
		return suspend - quiet
	}
	if st := s.State(); st == Connected || st == Reconnected {
		s.transition(Suspended, nil, "no server response for "+quiet.Round(time.Millisecond).String())
	}
	// A connection that says nothing (or a handshake that never completes)
	// is dropped, so go-zookeeper tries again before we give up.
	next := min(lost-quiet, s.dropSilentLink(redial))
	return max(next, time.Millisecond)
}

func (s *Session) handle(ev zk.Event) {
	switch ev.State {
	case zk.StateHasSession:
		s.linkMu.Lock()
		h := s.hs
		s.linkMu.Unlock()
		s.mu.Lock()
		s.server = ev.Server
		first := s.id == 0
		if first {
			s.id, s.timeout, s.passwd = h.sessionID, h.timeout, h.passwd
		}
		same := h.sessionID == s.id
		s.mu.Unlock()
		switch {
		case !same:
			s.end(Expired, ErrSessionExpired, "server gave a different session")
		case first:
			s.transition(Connected, nil, "session established")
			close(s.ready)
			s.spawn(s.heartbeat)
		case s.State() == Suspended:
			s.transition(Reconnected, nil, "same session on "+ev.Server)
		}
	case zk.StateDisconnected:
		if st := s.State(); st == Connected || st == Reconnected {
			s.transition(Suspended, nil, "disconnected from "+ev.Server)
		}
	case zk.StateExpired:
		s.end(Expired, ErrSessionExpired, "server reported expiry")
	case zk.StateAuthFailed:
		s.end(Closed, ErrAuthFailed, "server rejected credentials")
	}
}

// transition records a non-terminal state change and tells subscribers.
func (s *Session) transition(st State, err error, why string) {
	s.mu.Lock()
	if s.state.Terminal() {
		s.mu.Unlock()
		return
	}
	s.state = st
	c := StateChange{State: st, At: time.Now(), Server: s.server, Err: err}
	for q := range s.subs {
		q.Push(c)
	}
	if st.Terminal() {
		s.subs = nil
	}
	s.mu.Unlock()
	s.log.Info("zookeeper session "+st.String(), "session", fmt.Sprintf("0x%x", s.ID()), "why", why)
}

// end makes the Session terminal. Only run calls it.
func (s *Session) end(st State, cause error, why string) {
	if s.State().Terminal() {
		return
	}
	s.gate.Store(true)
	err := fmt.Errorf("%w: %s", cause, why)
	s.mu.Lock()
	s.err = err
	if st == Expired {
		s.expiredAt = s.now()
	}
	s.mu.Unlock()
	s.transition(st, err, why)
	close(s.done)
	s.cancel()
}

// teardown stops go-zookeeper and every goroutine the Session started.
// closeSession is sent only when the owner closed the Session.
func (s *Session) teardown() {
	s.spawnMu.Lock()
	s.stopping = true
	s.spawnMu.Unlock()
	if s.State() == Closed {
		// Close sends closeSession if a connection is up; the server then
		// deletes our ephemeral nodes at once, as the owner asked.
		s.conn.Close()
		s.dropLink()
	} else {
		// Lost or Expired: the owners of our ephemeral nodes have just been
		// told to stop, and they may use the time the server still holds
		// the session. Drop the link first (the gate is already closed, so
		// no other opens), so that no closeSession can reach a server, not
		// even through a handshake that completes meanwhile.
		s.dropLink()
		s.conn.Close()
	}
	<-s.zkStopped
	s.tasks.Wait()
}

// spawn runs f in a goroutine tracked by the Session, unless the Session is
// stopping, in which case it reports false.
func (s *Session) spawn(f func()) bool {
	s.spawnMu.Lock()
	defer s.spawnMu.Unlock()
	if s.stopping {
		return false
	}
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		f()
	}()
	return true
}

// alive returns the Session's error once it has ended.
func (s *Session) alive() error {
	select {
	case <-s.done:
		return s.Err()
	default:
		return nil
	}
}

// call runs one go-zookeeper request, returning early if ctx ends. If the
// Session has ended, the error says why. The result travels through a
// channel, so a request abandoned by its caller cannot race with it.
func call[T any](s *Session, ctx context.Context, f func() (T, error)) (T, error) {
	var zero T
	if err := s.alive(); err != nil {
		return zero, err
	}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	var (
		v   T
		err error
	)
	if ctx.Done() == nil {
		v, err = f()
	} else {
		type result struct {
			v   T
			err error
		}
		res := make(chan result, 1)
		if !s.spawn(func() {
			v, err := f()
			res <- result{v, err}
		}) {
			return zero, s.Err()
		}
		select {
		case r := <-res:
			v, err = r.v, r.err
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
	if err != nil && (errors.Is(err, zk.ErrClosing) || IsRetryable(err)) {
		if serr := s.alive(); serr != nil {
			return zero, serr
		}
	}
	return v, err
}

// retryCall is call, retried on connection loss (for idempotent requests).
func retryCall[T any](s *Session, ctx context.Context, f func() (T, error)) (T, error) {
	var out T
	err := s.Retry(ctx, func(ctx context.Context) error {
		v, err := call(s, ctx, f)
		out = v
		return err
	})
	return out, err
}

// none adapts a request without a result for call.
func none(f func() error) func() (struct{}, error) {
	return func() (struct{}, error) { return struct{}{}, f() }
}

// zkLogger sends go-zookeeper's logs to slog at debug level.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug(fmt.Sprintf(format, args...), "source", "go-zookeeper")
}
