package zkcoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/fifo"
)

// RecoveryKind says what a Supervisor did.
type RecoveryKind int

const (
	// SessionStarted: a Session was opened and the work started on it.
	SessionStarted RecoveryKind = iota
	// SessionEnded: the Session the work ran on was Lost or Expired, or
	// the work asked for a new one (WithRestartIf); whatever the work
	// owned on it is gone.
	SessionEnded
	// Recovering: an attempt to open a new Session failed; another follows
	// after a backoff.
	Recovering
	// Recovered: a new Session was opened after a loss and the work started
	// again on it. Everything the work owns from now on is new: new Done
	// channels, new fencing tokens.
	Recovered
)

func (k RecoveryKind) String() string {
	switch k {
	case SessionStarted:
		return "session started"
	case SessionEnded:
		return "session ended"
	case Recovering:
		return "recovering"
	case Recovered:
		return "recovered"
	}
	return fmt.Sprintf("RecoveryKind(%d)", int(k))
}

// RecoveryEvent tells a Supervise caller what happened.
type RecoveryEvent struct {
	Kind    RecoveryKind
	At      time.Time
	Session int64 // the ZooKeeper session id (0 for Recovering)
	Attempt int   // connection attempts since the last loss
	Err     error // why the Session ended, or why an attempt failed
}

// SuperviseOption configures Supervise.
type SuperviseOption func(*superviseOptions)

type superviseOptions struct {
	events     chan<- RecoveryEvent
	maxBackoff time.Duration
	restartIf  func(error) bool
}

// WithRecoveryEvents sends every RecoveryEvent of Supervise to ch; its
// owner is Supervise, until it returns.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
func WithRecoveryEvents(ch chan<- RecoveryEvent) SuperviseOption {
	return func(o *superviseOptions) { o.events = ch }
}

// WithMaxBackoff caps the wait between connection attempts (default 5s).
func WithMaxBackoff(d time.Duration) SuperviseOption {
	return func(o *superviseOptions) { o.maxBackoff = d }
}

// WithRestartIf lets work's errors decide whether a new Session follows.
// When work returns an error, Supervise calls f with it, whatever became
// of the Session: true closes the Session and runs work again on a new one,
// as after a loss (after a backoff when the Session was still alive);
// false ends Supervise with the error, even when the Session was Lost or
// Expired. Without it, an error of work ends Supervise while the Session is
// alive and a Lost or Expired Session always leads to a new one.
// Rejected credentials and an invalid Config end Supervise in any case.
func WithRestartIf(f func(err error) bool) SuperviseOption {
	return func(o *superviseOptions) { o.restartIf = f }
}

// Supervise keeps work running across Sessions: it opens a Session with
// cfg, runs work on it, and when that Session is Lost or Expired, opens a
// new Session with the same Config (with backoff) and runs work again; the
// servers the last Session learned from the ensemble's membership are added
// to Config.Servers. It
// never presents a new Session as the old one: work starts from scratch
// every time, so every lock, leadership or membership it takes is a new
// ownership.
//
// work's ctx ends when the Session ends or Supervise's ctx ends. Supervise
// returns nil when work returns nil with its Session alive (the work is
// done), work's error when it fails with its Session alive, ctx's error
// when ctx ends, and the Session's error when it ends in a way a new
// Session cannot fix (rejected credentials, an invalid Config);
// WithRestartIf lets work's errors ask for a new Session too. Each
// Session is closed before the next opens and before Supervise returns.
func Supervise(ctx context.Context, cfg Config, work func(ctx context.Context, sess *Session) error, opts ...SuperviseOption) error {
	o := superviseOptions{maxBackoff: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	full, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	// One attempt waits this long for a server before it counts as failed.
	attemptTimeout := max(2*full.SessionTimeout, 2*time.Second)
	events := fifo.NewFeed(o.events)
	defer events.End()
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	recovered := false
	var restarts backoff // grows while work asks for new Sessions in a row
	for {
		sess, err := reconnect(ctx, cfg, attemptTimeout, o.maxBackoff, events)
		if err != nil {
			return err
		}
		kind := SessionStarted
		if recovered {
			kind = Recovered
		}
		events.Push(RecoveryEvent{Kind: kind, At: time.Now(), Session: sess.ID()})
		started := time.Now()
		err = runOnce(ctx, sess, work)
		cause := sess.Err()
		closeSession(sess)
		cfg.Servers = withLearned(cfg.Servers, sess.Servers())
		lost := errors.Is(cause, ErrSessionLost) || errors.Is(cause, ErrSessionExpired)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && o.restartIf != nil && (cause == nil || lost):
			if !o.restartIf(err) {
				return err
			}
			if cause == nil {
				cause = err // the work asked for a new Session
			}
		case cause == nil:
			return err // done, or failed, with the Session alive
		case !lost:
			return cause // closed by work, or credentials rejected
		}
		log.Warn("zookeeper session ended; recovering with a new one", "err", cause)
		events.Push(RecoveryEvent{Kind: SessionEnded, At: time.Now(), Session: sess.ID(), Err: cause})
		recovered = true
		if time.Since(started) > o.maxBackoff {
			restarts = backoff{}
		}
		if !lost {
			// The Session was fine: wait before the next, so that work
			// failing at once cannot spin.
			if err := sleep(ctx, min(restarts.next()*4, o.maxBackoff)); err != nil {
				return err
			}
		}
	}
}

// withLearned returns the servers given followed by those a Session
// learned from the ensemble's membership (see Config.PinServers), so that
// the next Session finds the ensemble even when every server first given
// has been removed from it.
func withLearned(given, learned []string) []string {
	out := slices.Clone(given)
	for _, s := range learned {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// sleep waits about d (jittered), or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if delay.Sleep(ctx, d/2+rand.N(d/2+1), nil) {
		return nil
	}
	return ctx.Err()
}

// runOnce runs work with a context that ends with ctx or the Session.
func runOnce(ctx context.Context, sess *Session, work func(context.Context, *Session) error) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(sess.Context(), cancel)
	defer stop()
	return work(wctx, sess)
}

// reconnect opens a Session, retrying with backoff while the failure is one
// a later attempt may not see.
func reconnect(ctx context.Context, cfg Config, timeout, maxBackoff time.Duration, events *fifo.Feed[RecoveryEvent]) (*Session, error) {
	b := backoff{}
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		sess, err := Connect(actx, cfg)
		cancel()
		if err == nil {
			return sess, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrAuthFailed) || errors.Is(err, ErrInvalidConfig) {
			return nil, err
		}
		events.Push(RecoveryEvent{Kind: Recovering, At: time.Now(), Attempt: attempt, Err: err})
		if err := sleep(ctx, min(b.next()*4, maxBackoff)); err != nil {
			return nil, err
		}
	}
}

func closeSession(sess *Session) {
	ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout()+5*time.Second)
	defer cancel()
	_ = sess.Close(ctx)
}
