package failover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/gate"
)

// Errors reported by Run.
var (
	// ErrRunning: Run was called twice on one Failover.
	ErrRunning = errors.New("failover: Run already called")
	// ErrNoFence: New was given no fencing function.
	ErrNoFence = errors.New("failover: a fencing function is required")
)

// FenceFunc stops a previous active instance, named by its breadcrumb,
// from acting: kill its process, revoke its access to the shared resource,
// raise the resource's minimum token to above prev.Token... It must return
// nil only once the previous instance can no longer act. An error keeps
// this instance from becoming active: it gives up the lock and tries again
// after the retry delay. ctx ends if the lock is lost meanwhile.
type FenceFunc func(ctx context.Context, prev Breadcrumb) error

// ActiveFunc does the active instance's work until ctx ends, which happens
// when the lock is lost (the Session was declared Lost, or the instance was
// deposed) or Run's ctx ends. Returning nil before that is a clean stop;
// returning an error is an unclean one.
type ActiveFunc func(ctx context.Context, a Activation) error

// Activation describes one period of being active.
type Activation struct {
	// ID is this instance's participant id.
	ID string
	// Token is the fencing token: the creation zxid of this instance's
	// election node, larger than every earlier active's token (no instance
	// becomes active once the election's sequence counter wrapped: see
	// docs/protocol.md#sequence-numbers-and-their-wrap). Pass it to the
	// shared resource with every write.
	Token int64
	// Term is the election term.
	Term int64
	// Fence allows guarded writes (Session.GuardedMulti) that succeed only
	// while this instance holds the lock.
	Fence zkcoord.Fence
	// Previous is the breadcrumb found before activation: nil when the
	// previous active stopped cleanly.
	Previous *Breadcrumb
	// Fenced reports that the fencing function ran (and succeeded) against
	// Previous. It is false when Previous is nil, or when Previous is this
	// instance's own earlier activation in the same Run, which had
	// already stopped.
	Fenced bool
	// Leadership is the underlying election leadership.
	Leadership *election.Leadership
}

// Option configures a Failover.
type Option func(*options)

type options struct {
	id     string
	data   []byte
	logger *slog.Logger
	events chan<- Event
	retry  time.Duration
	delay  time.Duration // WithLockDelay

	health         HealthFunc
	healthEvery    time.Duration
	healthFailures int
}

// WithID sets this instance's participant id (default: the election
// package's default).
func WithID(id string) Option { return func(o *options) { o.id = id } }

// WithData sets what this instance publishes in its breadcrumb while
// active, for the next active's fencing function: an address, a process
// id, a host name.
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte(nil), data...) }
}

// WithLogger sends logs to l (default: the Session's logger).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithEvents sends every transition of Run to ch; its owner is Run,
// until it returns.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
func WithEvents(ch chan<- Event) Option { return func(o *options) { o.events = ch } }

// WithRetryDelay sets how long to wait before competing again after a
// failed fencing or a failed step of activation (default 1s).
func WithRetryDelay(d time.Duration) Option { return func(o *options) { o.retry = d } }

// Failover runs one instance of an active/standby pair (or group). Its
// methods are safe for concurrent use; Run may be called once.
//
// Layout under path: the election directory "lock" (Curator LeaderLatch
// layout) with its term node "lock-term" and leader node "lock-leader",
// and the persistent "breadcrumb" naming the last active instance.
type Failover struct {
	sess    *zkcoord.Session
	path    string
	crumb   string
	fence   FenceFunc
	opts    options
	el      *election.Election
	health  *gate.Health // nil without WithHealthCheck
	running atomic.Bool

	// lastToken is the token of this Run's last activation, which has
	// stopped: its own breadcrumb needs no fencing. Run's goroutine only.
	lastToken int64
	// feed sends Run's events to the WithEvents channel, off Run's
	// goroutine; nil without one. Run's goroutine only.
	feed *fifo.Feed[Event]
}

// New returns a Failover for path. fence is required.
func New(sess *zkcoord.Session, path string, fence FenceFunc, opts ...Option) (*Failover, error) {
	if sess == nil {
		return nil, errors.New("failover: nil Session")
	}
	if fence == nil {
		return nil, ErrNoFence
	}
	o := options{retry: time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if err := zkcoord.ValidatePath(path); err != nil || path == "/" {
		return nil, fmt.Errorf("failover: path %q: %w", path, zkcoord.ErrInvalidPath)
	}
	if o.retry < 0 {
		return nil, fmt.Errorf("failover: negative retry delay %v", o.retry)
	}
	if err := o.validateHealth(); err != nil {
		return nil, err
	}
	if o.logger == nil {
		o.logger = sess.Logger()
	}
	if len(o.data) > sess.Config().MaxDataSize/2 {
		return nil, fmt.Errorf("failover: %w: %d bytes of breadcrumb data", zkcoord.ErrTooLarge, len(o.data))
	}
	eopts := []election.Option{election.WithLogger(o.logger)}
	if o.id != "" {
		eopts = append(eopts, election.WithID(o.id))
	}
	if o.delay != 0 {
		eopts = append(eopts, election.WithLockDelay(o.delay))
	}
	el, err := election.New(sess, zkcoord.Join(path, "lock"), eopts...)
	if err != nil {
		return nil, fmt.Errorf("failover: %w", err)
	}
	o.id = el.ID()
	return &Failover{sess: sess, path: path, crumb: zkcoord.Join(path, "breadcrumb"), fence: fence, opts: o, el: el, health: newHealth(o)}, nil
}

// ID returns this instance's participant id.
func (f *Failover) ID() string { return f.opts.id }

// Election returns the election behind the lock, to see who is active
// (Leader, Observe).
func (f *Failover) Election() *election.Election { return f.el }

// Run competes for the lock and, each time it wins, fences the previous
// active instance if its breadcrumb is there, writes its own breadcrumb and
// runs active until the lock is lost or ctx ends. After losing the lock it
// stands by again, while the Session lives.
//
// Run returns nil after a clean stop: ctx ended (or active returned nil);
// the breadcrumb is then deleted so the next active has nothing to fence.
// It returns active's error after an unclean stop (the breadcrumb stays),
// and the cause when the Session ends (start a new Session and a new
// Failover to carry on). It also returns, without becoming active, when
// the election was ended (election.ErrEnded) or its sequence counter
// wrapped (zkcoord.ErrSequenceWrapped, see the election package).
func (f *Failover) Run(ctx context.Context, active ActiveFunc) error {
	if !f.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	f.feed = fifo.NewFeed(f.opts.events)
	defer f.feed.End()
	if f.health != nil {
		hctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); f.health.Run(hctx) }()
		defer func() { stop(); <-done }()
	}
	for {
		if ctx.Err() != nil {
			f.emit(Event{Type: EventStopped})
			return nil
		}
		if !f.waitHealthy(ctx) {
			continue // ctx ended
		}
		f.emit(Event{Type: EventStandby})
		cctx, stopCampaign := f.whileHealthy(ctx)
		l, err := f.el.Campaign(cctx)
		unhealthy := errors.Is(context.Cause(cctx), ErrUnhealthy)
		stopCampaign()
		if err != nil {
			switch {
			case unhealthy && ctx.Err() == nil:
				continue // stand again once healthy
			case ctx.Err() != nil:
				f.emit(Event{Type: EventStopped})
				return nil
			case f.sess.Err() != nil, errors.Is(err, election.ErrEnded), errors.Is(err, zkcoord.ErrSequenceWrapped),
				errors.Is(err, election.ErrOtherElection):
				// After a wrap no candidate may lead until the election's
				// directory is made anew, and beside a plain election on
				// the same path none may lead: say so rather than try
				// again.
				f.emit(Event{Type: EventStopped, Err: err})
				return fmt.Errorf("failover: %w", err)
			}
			f.opts.logger.Warn("failover: campaign failed", "path", f.path, "err", err)
			f.pause(ctx)
			continue
		}
		done, err := f.serve(ctx, l, active)
		if done {
			f.emit(Event{Type: EventStopped, Err: err})
			return err
		}
		if errors.Is(err, errRetry) {
			f.pause(ctx)
		}
	}
}

var errRetry = errors.New("failover: retry")

// waitHealthy waits, with the events that say so, until the health check
// passes. It reports false if ctx ended first.
func (f *Failover) waitHealthy(ctx context.Context) bool {
	if f.health == nil {
		return true
	}
	if ok, _ := f.health.State(); ok {
		return true
	}
	f.emit(Event{Type: EventUnhealthy})
	if f.health.Wait(ctx) != nil {
		return false
	}
	f.emit(Event{Type: EventHealthy})
	return true
}

// whileHealthy returns ctx, ended early with cause ErrUnhealthy if the
// health check starts failing.
func (f *Failover) whileHealthy(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.health == nil {
		return context.WithCancel(ctx)
	}
	return f.health.While(ctx, ErrUnhealthy)
}

// pause waits for the retry delay, or until ctx or the Session ends.
func (f *Failover) pause(ctx context.Context) { delay.Sleep(ctx, f.opts.retry, f.sess.Done()) }
