package zkcoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/internal/zkconn"
)

// Session owns one ZooKeeper session. Create it with Connect; it is safe for
// concurrent use. See the package documentation for its life cycle.
type Session struct {
	cfg  Config
	root chroot
	log  *slog.Logger
	conn *zkconn.Client
	acl  []wire.ACL // Config.ACL as sent
	// established is set once the first connection is up.
	established atomic.Bool

	closeReq  chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	state State
	err   error
	subs  map[*fifo.Queue[StateChange]]struct{}
	// expiredAt is when the server was heard to report the session gone,
	// zero before.
	expiredAt time.Time

	done     chan struct{} // closed when the Session ends
	ctx      context.Context
	cancel   context.CancelFunc
	finished chan struct{} // closed when every goroutine of the Session ended

	spawnMu  sync.Mutex
	stopping bool
	tasks    sync.WaitGroup
}

// Connect opens a ZooKeeper session and waits until it is established, the
// SASL mechanism and the credentials in cfg.Auth are accepted and
// cfg.Chroot exists. If ctx ends
// first, everything is torn down and ctx's error returned.
//
// In the background it then reads the server's tickTime and syncLimit (the
// conf four-letter word) and logs a warning if a follower cut off from the
// ZooKeeper leader could keep the session answered until after the leader
// expired it (see ensembleRisk); a server that refuses is not an error.
// Unless cfg.PinServers is set, it also starts following the ensemble's
// membership (see Config.PinServers and Session.Servers).
func Connect(ctx context.Context, cfg Config) (*Session, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Session{
		cfg:      cfg,
		root:     chroot(cfg.Chroot),
		acl:      wireACL(cfg.ACL),
		log:      cfg.Logger,
		closeReq: make(chan struct{}),
		subs:     make(map[*fifo.Queue[StateChange]]struct{}),
		done:     make(chan struct{}),
		finished: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	auth := make([]wire.AuthPacket, len(cfg.Auth))
	for i, a := range cfg.Auth {
		auth[i] = wire.AuthPacket{Scheme: a.Scheme, Auth: []byte(a.Credential)}
	}
	conn, err := zkconn.Dial(ctx, zkconn.Config{
		Servers:        cfg.Servers,
		SessionTimeout: cfg.SessionTimeout,
		Auth:           auth,
		SASL:           zkconnSASL(cfg.SASL),
		Dial:           s.dial,
		// A listing of a large directory can exceed the server's 1 MiB
		// jute.maxbuffer, which bounds what it reads, not what it sends.
		MaxReply:  16 << 20,
		Failed:    s.attemptFailed,
		PingEvery: func(t time.Duration) time.Duration { return heartbeatEvery(t, cfg.LostAfter) },
	})
	if err != nil {
		if errors.Is(err, wire.ErrAuthFailed) {
			return nil, fmt.Errorf("zkcoord: connect to %v: %w: %w", cfg.Servers, ErrAuthFailed, err)
		}
		if ctx.Err() != nil {
			// err says why each server failed, ctx why Connect stopped.
			return nil, fmt.Errorf("zkcoord: connect to %v: %w (%v)", cfg.Servers, ctx.Err(), err)
		}
		return nil, fmt.Errorf("zkcoord: connect to %v: %w", cfg.Servers, err)
	}
	s.conn = conn
	s.established.Store(true)
	s.state = Connected
	s.log.Info("zookeeper session "+Connected.String(), "session", fmt.Sprintf("0x%x", s.ID()), "why", "session established")
	if s.Timeout() != cfg.SessionTimeout {
		s.log.Info("zookeeper negotiated another session timeout than asked",
			"asked", cfg.SessionTimeout, "negotiated", s.Timeout(), "lostAfter", s.LostAfter())
	}
	go s.run()

	if err := s.setup(ctx); err != nil {
		s.Close(context.Background())
		if errors.Is(err, ErrAuthFailed) || ctx.Err() == nil {
			return nil, err
		}
		return nil, fmt.Errorf("zkcoord: connect to %v: %w", cfg.Servers, ctx.Err())
	}
	server := s.Server()
	s.spawn(func() { s.checkEnsemble(server) })
	if !cfg.PinServers {
		s.spawn(s.followEnsemble)
	}
	return s, nil
}

// attemptFailed logs a connection attempt that failed: at warn level until
// the session is established, so that a refused connection or an unknown
// host is reported at once with its reason, at debug level afterwards,
// when the Session's state tells the story.
func (s *Session) attemptFailed(server string, err error) {
	if s.established.Load() {
		s.log.Debug("zookeeper connection attempt failed", "server", server, "err", err)
		return
	}
	s.log.Warn("cannot connect to a ZooKeeper server; trying the next", "server", server, "err", err)
}

// setup waits until the server has answered a request after the
// credentials (a server that refuses them closes the connection first),
// and creates the chroot (or, with ChrootMustExist, checks that it exists).
func (s *Session) setup(ctx context.Context) error {
	if len(s.cfg.Auth) > 0 {
		if _, _, err := s.Exists(ctx, "/"); err != nil {
			return err
		}
	}
	if s.cfg.Chroot != "" && s.cfg.ChrootMustExist {
		_, err := retryCall(s, ctx, func(ctx context.Context) (wire.Stat, error) {
			st, _, _, err := s.conn.Exists(ctx, s.cfg.Chroot, false)
			return st, err
		})
		if err != nil {
			return fmt.Errorf("zkcoord: chroot %s: %w", s.cfg.Chroot, err)
		}
	} else if s.cfg.Chroot != "" {
		if err := s.ensure(ctx, chroot(""), s.cfg.Chroot, FlagPersistent); err != nil {
			return fmt.Errorf("zkcoord: create chroot %s: %w", s.cfg.Chroot, err)
		}
	}
	return nil
}

// ID returns the ZooKeeper session id.
func (s *Session) ID() int64 { return s.conn.SessionID() }

// Password returns the session password. Together with ID it lets a test
// harness expire the session from the server side.
func (s *Session) Password() []byte { return s.conn.Password() }

// Timeout returns the session timeout negotiated with the server.
func (s *Session) Timeout() time.Duration { return s.conn.SessionTimeout() }

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
// later than that report.
func (s *Session) ExpiryDeadline() time.Time {
	at := s.conn.LastRenewal().Add(s.Timeout())
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.expiredAt.IsZero() && s.expiredAt.Before(at) {
		return s.expiredAt
	}
	return at
}

// Server returns the address of the server the session last used.
func (s *Session) Server() string {
	server, _ := s.conn.Connected()
	return server
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
	q.Push(StateChange{State: s.state, At: time.Now(), Server: s.Server(), Err: s.err})
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

// silence is the time since the last server response that proves the
// session renewed: the write time of the last request answered.
func (s *Session) silence() time.Duration {
	return time.Since(s.conn.LastRenewal())
}

// run is the single goroutine that owns the Session's state machine. It
// follows the connection's events and the silence since the last reply.
func (s *Session) run() {
	defer close(s.finished)
	events := s.conn.Session()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-events.Ready():
			for ev, ok := events.TryNext(); ok; ev, ok = events.TryNext() {
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

// heartbeatEvery returns how much quiet on the connection makes it ping
// the server, for negotiated timeout t: a sixth of the timeout, so that a
// single late reply does not bring the Session close to Lost, or a quarter
// of the Lost threshold when that is shorter, so that a small LostAfter
// does not end a healthy Session.
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
	// A connection that says nothing is dropped, so that the next server is
	// tried before the Session gives up. A handshake in progress is bounded
	// by the connection itself.
	s.conn.Reconnect(redial)
	return max(min(lost-quiet, redial), time.Millisecond)
}

func (s *Session) handle(ev zkconn.Event) {
	server, _ := s.conn.Connected()
	switch ev.State {
	case wire.StateSyncConnected:
		if s.State() == Suspended {
			s.transition(Reconnected, nil, "same session on "+server)
		}
	case wire.StateDisconnected:
		if st := s.State(); st == Connected || st == Reconnected {
			s.transition(Suspended, nil, "disconnected from "+server)
		}
	case wire.StateExpired:
		s.end(Expired, ErrSessionExpired, "server reported expiry")
	case wire.StateAuthFailed:
		// The connection's end follows its last event at once, with the
		// reason (a refused AuthPacket, or which SASL step failed).
		<-s.conn.Done()
		why := "server rejected credentials"
		if err := s.conn.Err(); err != nil {
			why = err.Error()
		}
		s.end(Closed, ErrAuthFailed, why)
	case wire.StateClosed:
		s.end(Closed, ErrSessionClosed, "connection closed")
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
	c := StateChange{State: st, At: time.Now(), Server: s.Server(), Err: err}
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
	err := fmt.Errorf("%w: %s", cause, why)
	s.mu.Lock()
	s.err = err
	if st == Expired {
		s.expiredAt = time.Now()
	}
	s.mu.Unlock()
	s.transition(st, err, why)
	close(s.done)
	s.cancel()
}

// teardown ends the connection and every goroutine the Session started.
// closeSession is sent only when the owner closed the Session: the server
// then deletes our ephemeral nodes at once, as the owner asked. Lost or
// Expired, the owners of our ephemeral nodes have just been told to stop,
// and they may use the time the server still holds the session, so the
// connection is abandoned without a word.
func (s *Session) teardown() {
	s.spawnMu.Lock()
	s.stopping = true
	s.spawnMu.Unlock()
	if s.State() == Closed && !errors.Is(s.Err(), ErrAuthFailed) {
		ctx, cancel := context.WithTimeout(context.Background(), s.LostAfter())
		_ = s.conn.Close(ctx)
		cancel()
	} else {
		s.conn.Abandon()
	}
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

// call runs one request, unless the Session has ended, and says in its
// error what is known of the outcome: an error wrapping ErrOutcomeUnknown
// (and ctx's error) when ctx ended after the request was written, the
// Session's error once the Session has ended.
func call[T any](s *Session, ctx context.Context, f func(ctx context.Context) (T, error)) (T, error) {
	if err := s.alive(); err != nil {
		var zero T
		return zero, err
	}
	v, err := f(ctx)
	if err != nil {
		err = s.callErr(err)
	}
	return v, err
}

// callErr is call's error mapping.
func (s *Session) callErr(err error) error {
	switch {
	case s.conn.Err() != nil, errors.Is(err, zkconn.ErrNotSent) &&
		(errors.Is(err, zkconn.ErrClosed) || errors.Is(err, wire.ErrSessionExpired) || errors.Is(err, wire.ErrAuthFailed)):
		// The connection has ended: the Session ends with it, if it has
		// not ended it itself.
		<-s.done
		return s.Err()
	case errors.Is(err, zkconn.ErrOutcomeUnknown):
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	case errors.Is(err, wire.ErrFrameTooLarge):
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	return err
}

// retryCall is call, retried on connection loss (for idempotent requests).
func retryCall[T any](s *Session, ctx context.Context, f func(ctx context.Context) (T, error)) (T, error) {
	var out T
	err := s.Retry(ctx, func(ctx context.Context) error {
		v, err := call(s, ctx, f)
		out = v
		return err
	})
	return out, err
}
