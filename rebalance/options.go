package rebalance

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// Mode selects how a rebalancing hands resources over. Every client of a
// group must use the same mode.
type Mode int

const (
	// Incremental (the default): resource barriers with a sticky
	// allocation. Only resources that change owner are stopped and started;
	// the others never pause.
	Incremental Mode = iota
	// ResourceBarrier (seed protocol with per-resource barriers): on every
	// new allocation each client stops everything it owns, then starts its
	// new share once each resource's previous owner has released it.
	ResourceBarrier
	// GlobalBarrier: the coordinator tells everyone to stop, waits until
	// every client has checked in as stopped, writes the allocation, tells
	// everyone to start and waits until every client has checked out.
	GlobalBarrier
)

var modeNames = [...]string{"incremental", "resource-barrier", "global-barrier"}

func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses the String form of a Mode.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown mode %q (want incremental, resource-barrier or global-barrier)", ErrInvalidOption, s)
}

// Defaults of the options.
const (
	DefaultMinInterval = time.Second
)

// Option configures Start and StartConfig.
type Option func(*options)

type options struct {
	mode         Mode
	minInterval  time.Duration
	startDelay   time.Duration
	lockDelay    time.Duration
	selfExpiry   float64
	autoRecovery bool
	name         string
	logger       *slog.Logger
	maxBackoff   time.Duration
	events       chan<- zkcoord.RecoveryEvent
	recheck      time.Duration
	// weight is this client's weight (0: unset, weighs 1); see weights.go.
	weight          int64
	resourceWeights func(resource string) int64
	allocator       alloc.Func
	hooks           *elect.Hooks // test hooks of the election engine
	// barrierFault, a test hook, may fail a barrier watcher's re-read of
	// the barrier of res with the error it returns.
	barrierFault func(res string) error
}

func defaultOptions() options {
	return options{mode: Incremental, minInterval: DefaultMinInterval, maxBackoff: 5 * time.Second}
}

func (o options) validate() error {
	switch {
	case o.mode < Incremental || o.mode > GlobalBarrier:
		return fmt.Errorf("%w: mode %v", ErrInvalidOption, o.mode)
	case o.minInterval < 0:
		return fmt.Errorf("%w: negative minimum interval", ErrInvalidOption)
	case o.startDelay < 0:
		return fmt.Errorf("%w: negative start delay", ErrInvalidOption)
	case o.lockDelay < 0:
		return fmt.Errorf("%w: negative lock-delay", ErrInvalidOption)
	case o.selfExpiry != 0 && !(o.selfExpiry > 0 && o.selfExpiry < 1):
		return fmt.Errorf("%w: self-expiry fraction %v must be in (0, 1)", ErrInvalidOption, o.selfExpiry)
	case o.recheck < 0:
		return fmt.Errorf("%w: negative re-check interval", ErrInvalidOption)
	case o.weight < 0 || o.weight > alloc.MaxWeight:
		return fmt.Errorf("%w: weight %d must be from 1 to %d", ErrInvalidOption, o.weight, alloc.MaxWeight)
	case o.maxBackoff <= 0:
		return fmt.Errorf("%w: recovery backoff must be positive", ErrInvalidOption)
	}
	return nil
}

// WithMode selects the rebalancing mode (default Incremental).
func WithMode(m Mode) Option { return func(o *options) { o.mode = m } }

// WithMinInterval sets the minimum time between the starts of two
// rebalancings, so that bursts of joins and leaves (deployments) cause few
// rebalancings: changes in between are coalesced into the next one, never
// lost. It only matters on the coordinator. Default DefaultMinInterval; 0
// rebalances on every change.
func WithMinInterval(d time.Duration) Option { return func(o *options) { o.minInterval = d } }

// WithStartDelay makes the client wait d between taking over a resource
// (creating its barrier) and calling Handler.Assigned for it, for
// applications that need a quiet period between owners.
func WithStartDelay(d time.Duration) Option { return func(o *options) { o.startDelay = d } }

// WithLockDelay makes the client wait d between taking over a resource
// (creating its barrier) and calling Handler.Assigned for it when the
// resource's previous barrier vanished without a clean release: its
// owner's session expired, or someone else deleted it. An owner paused
// past its session timeout (a GC pause, a stopped VM) then has d to wake,
// see its loss and stop before the next owner starts. A clean handover
// (the previous owner's Unassigned returned and it deleted its barrier)
// does not wait, nor does the first takeover of a resource added by
// AddResource, nor anything when d is 0 (the default). A resource
// registered by an older zkcoord waits at its first takeover: nothing on
// record tells it from a takeover after an expiry. With WithStartDelay as
// well, the longer of the two applies. Every member of the group keeps
// the records the delay relies on, with the option or without, as long as
// all of them run a zkcoord that has it; see docs/protocol.md,
// "Lock-delay".
func WithLockDelay(d time.Duration) Option { return func(o *options) { o.lockDelay = d } }

// WithSelfExpiry sets the fraction of the negotiated session timeout without
// any server response after which the client considers its session lost and
// stops every resource (the self-expiry of the protocol), leaving the rest
// of the timeout for handlers to stop before the server can expire the
// session and let another client in. With StartConfig it sets
// zkcoord.Config.LostAfter of every Session the client opens; with Start the
// given Session must already use a fraction no larger than f.
func WithSelfExpiry(f float64) Option { return func(o *options) { o.selfExpiry = f } }

// WithAutoRecovery makes a client started with StartConfig survive the loss
// of its session and recoverable errors (deposed coordinator, client node
// deleted, inconsistent state): it stops every resource, and
// zkcoord.Supervise, which runs every StartConfig client, opens a new
// Session on which it joins again as a new client, whose handlers get new
// assignments with new fencing tokens. Handler failures always abort.
// Start (with a caller's Session) cannot recover: one Session is one
// ZooKeeper session.
func WithAutoRecovery(on bool) Option { return func(o *options) { o.autoRecovery = on } }

// WithRecoveryEvents sends every zkcoord.RecoveryEvent of a client
// started with StartConfig (session started, session ended with the
// cause, recovering: an attempt to connect failed, and recovered) to ch;
// its owner is the client, until its Done is closed.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
// Start rejects it.
func WithRecoveryEvents(ch chan<- zkcoord.RecoveryEvent) Option {
	return func(o *options) { o.events = ch }
}

// WithName records a human-readable name in the client node, shown by
// Describe.
func WithName(name string) Option { return func(o *options) { o.name = name } }

// WithLogger sets the logger (default: the Session's).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithMaxRecoveryBackoff bounds the wait between two recovery attempts
// (zkcoord.WithMaxBackoff of the client's zkcoord.Supervise; default 5s),
// and between two calls of an Unassigned that fails.
func WithMaxRecoveryBackoff(d time.Duration) Option { return func(o *options) { o.maxBackoff = d } }

// WithRecheck sets how often a client that is not the coordinator reads
// the client nodes again in case the notification of its predecessor's
// departure was lost. Default: the Session's timeout, at most 10 seconds.
func WithRecheck(d time.Duration) Option { return func(o *options) { o.recheck = d } }
