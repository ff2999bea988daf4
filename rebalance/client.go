package rebalance

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// Assignment is one resource handed to this client.
type Assignment struct {
	// Resource is the resource id.
	Resource string `json:"resource"`
	// Token is the fencing token: the creation zxid of the resource's
	// barrier node. A later owner of the same resource always has a larger
	// token, so the resource itself can reject a stale owner (for example a
	// process that was paused past the end of its session).
	Token int64 `json:"token"`
	// Generation is the generation of the allocation that gave the
	// resource to this client.
	Generation int64 `json:"generation"`
	// Client is this client's id in the group (c_<sequence>).
	Client string `json:"client"`
	// Barrier is the path of the resource's barrier node, whose existence
	// is this client's ownership.
	Barrier string `json:"barrier,omitempty"`
}

// Fence returns the ownership as a fence: zkcoord.Session.GuardedMulti and
// GuardedSet write only while the barrier is this assignment's (its
// creation zxid is Token), and Fence().Check() puts the existence check
// into a transaction of the caller's own.
func (a Assignment) Fence() zkcoord.Fence {
	return zkcoord.Fence{Path: a.Barrier, Token: a.Token, Version: -1}
}

// Handler receives a client's assignments. Its functions are called from one
// goroutine, never concurrently with each other, and should return
// promptly: start long-running work in a goroutine and stop it in
// Unassigned. A nil function is skipped.
//
// An error returned by, or a panic in, Assigned aborts the client: it
// stops everything in a controlled way, leaves the group and reports the
// failure (wrapping ErrHandler) to Aborted and Err. An error returned by,
// or a panic in, Unassigned does not: see Unassigned.
type Handler struct {
	// Assigned is called once this client exclusively holds the resource:
	// its barrier node exists and the previous owner has stopped. ctx is
	// cancelled, with a cause (ErrMoved, ErrRemoved, ErrRebalancing,
	// ErrStopped, ErrBarrierLost, or the Session's or the abort's error),
	// as soon as the resource is being taken away; Unassigned follows.
	// If Assigned returns an error the resource counts as never started:
	// Unassigned is not called for it. Returning ctx's error (or cause)
	// once ctx is cancelled is a normal return, as nil is.
	Assigned func(ctx context.Context, a Assignment) error
	// Unassigned is called when the resource is taken away, after the
	// context given to Assigned was cancelled. When it returns, all use of
	// the resource must have stopped: the barrier is deleted right after,
	// letting the next owner in. After a session loss it must return
	// within the rest of the session timeout (see WithSelfExpiry).
	//
	// If it returns an error or panics, the resource may still be in use,
	// so it stays fenced: its barrier is kept, and with it the Session
	// (StartConfig does not close it; Stop and Done wait), so no other
	// client can start the resource. The failure is logged and reported
	// to StopFailed, and Unassigned is called again for the same
	// Assignment and cause after a pause (100ms, doubling up to
	// WithMaxRecoveryBackoff), until it returns nil; only then is the
	// barrier deleted. The client's other resources are not affected. A
	// resource that can never be stopped is released only by the end of
	// the Session, as when the process exits. After a session loss the
	// barrier goes with the session all the same (only the fencing token
	// protects the resource then), and Unassigned is still called again
	// until it succeeds before the client recovers or ends.
	Unassigned func(a Assignment, cause error) error
	// Aborted is called once when the client ends for a reason other than
	// Stop, after every resource was stopped.
	Aborted func(err error)
	// StopFailed is called after each failed call of Unassigned, with the
	// error (wrapping ErrHandler) and how many calls have failed for this
	// Assignment so far, before Unassigned is called again; the resource
	// stays fenced meanwhile (and is no longer among Assignments). An
	// application that cannot stop the resource may give up by exiting
	// the process.
	StopFailed func(a Assignment, failures int, err error)
}

// State is the state of a Client's state machine.
type State int

const (
	// NoRole: joining the group, or recovering with a new Session.
	NoRole State = iota + 1
	// Follower: a member that is not the coordinator.
	Follower
	// Coordinator: the member that computes and writes allocations.
	Coordinator
	// Stopped: ended by Stop. Terminal.
	Stopped
	// Aborted: ended by an error. Terminal.
	Aborted
)

var stateNames = [...]string{"", "NoRole", "Follower", "Coordinator", "Stopped", "Aborted"}

func (s State) String() string {
	if s > 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Client is one member of a rebalancing group. Its methods are safe for
// concurrent use.
type Client struct {
	lay  layout
	opts options
	h    Handler
	log  *slog.Logger

	cfg       zkcoord.Config // for StartConfig: how to open Sessions
	stopCtx   context.Context
	stopCause context.CancelCauseFunc
	done      chan struct{}

	mu    sync.Mutex
	state State
	id    string
	err   error
	held  map[string]Assignment
	// allocErr is the last allocation refused as coordinator.
	allocErr error
}

// Start joins the group at path (created if needed) with an existing
// Session. The client ends when the
// Session ends (after stopping every resource); it never closes the Session.
// Several clients may share one Session. Start returns once the client is
// registered in the group.
func Start(ctx context.Context, sess *zkcoord.Session, path string, h Handler, opts ...Option) (*Client, error) {
	if sess == nil {
		return nil, fmt.Errorf("%w: nil Session", ErrInvalidOption)
	}
	c, err := newClient(path, h, opts)
	if err != nil {
		return nil, err
	}
	if c.opts.autoRecovery {
		return nil, fmt.Errorf("%w: auto-recovery needs StartConfig (a Session cannot be renewed)", ErrInvalidOption)
	}
	if c.opts.events != nil {
		return nil, fmt.Errorf("%w: recovery events need StartConfig (a Session cannot be renewed)", ErrInvalidOption)
	}
	if f := c.opts.selfExpiry; f != 0 && sess.Config().LostAfter > f {
		return nil, fmt.Errorf("%w: self-expiry %v is stricter than the Session's LostAfter %v; set zkcoord.Config.LostAfter",
			ErrInvalidOption, f, sess.Config().LostAfter)
	}
	if c.log == nil {
		c.log = sess.Logger()
	}
	reg, err := c.join(ctx, sess)
	if err != nil {
		c.stopCause(ErrStopped)
		return nil, err
	}
	go c.run(sess, reg)
	return c, nil
}

// StartConfig joins the group at path with Sessions the client opens (and closes) itself
// from cfg, through zkcoord.Supervise: attempts to connect are retried with
// backoff until ctx ends. With WithAutoRecovery the client survives the
// loss of a Session: it stops everything and joins again, as a new client,
// on a new Session. It returns once the client is registered in the group.
func StartConfig(ctx context.Context, cfg zkcoord.Config, path string, h Handler, opts ...Option) (*Client, error) {
	c, err := newClient(path, h, opts)
	if err != nil {
		return nil, err
	}
	if c.opts.selfExpiry != 0 {
		cfg.LostAfter = c.opts.selfExpiry
	}
	c.cfg = cfg
	if c.log == nil {
		c.log = cfg.Logger
		if c.log == nil {
			c.log = slog.New(slog.DiscardHandler)
		}
	}
	started := make(chan error, 1)
	go c.supervise(started)
	select {
	case err := <-started:
		if err != nil {
			return nil, err
		}
		return c, nil
	case <-ctx.Done():
		c.stopCause(ErrStopped)
		<-c.done
		return nil, fmt.Errorf("rebalance: join %s: %w", c.lay.base, ctx.Err())
	}
}

func newClient(path string, h Handler, opts []Option) (*Client, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	lay, err := newLayout(path)
	if err != nil {
		return nil, err
	}
	c := &Client{lay: lay, opts: o, h: h, log: o.logger, done: make(chan struct{}),
		state: NoRole, held: make(map[string]Assignment)}
	c.stopCtx, c.stopCause = context.WithCancelCause(context.Background())
	return c, nil
}

// Stop leaves the group: the client deletes its node (so the others
// rebalance), stops every resource it holds (cancelling their contexts,
// calling Unassigned, deleting their barriers) and, with StartConfig,
// closes its Session. It waits until all that is done or ctx ends; the
// client keeps stopping in the background in the latter case (a resource
// whose Unassigned fails keeps the client, and its Session, until a call
// of Unassigned succeeds: see Handler.Unassigned). Stop on an ended client
// returns at once.
func (c *Client) Stop(ctx context.Context) error {
	c.stopCause(ErrStopped)
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("rebalance: stop: %w", ctx.Err())
	}
}

// Done is closed when the client has ended (Stopped or Aborted) and every
// resource has been stopped.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns nil until the client ends, then nil after Stop or the cause
// of the abort (a handler that fails while the client stops also aborts
// it).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// State returns the current state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// ID returns the client's current id in the group (c_<sequence>); it
// changes when the client recovers with a new Session.
func (c *Client) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// Group returns the group's name.
func (c *Client) Group() string { return c.lay.group }

// Mode returns the rebalancing mode.
func (c *Client) Mode() Mode { return c.opts.mode }

// Assignments returns the resources this client currently runs (Assigned
// returned successfully and they have not been taken away), sorted by
// resource id.
func (c *Client) Assignments() []Assignment {
	c.mu.Lock()
	out := make([]Assignment, 0, len(c.held))
	for _, a := range c.held {
		out = append(out, a)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b Assignment) int { return strings.Compare(a.Resource, b.Resource) })
	return out
}

func (c *Client) setState(s State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == Stopped || c.state == Aborted {
		return
	}
	if c.state != s {
		c.log.Debug("rebalance: state", "group", c.lay.group, "client", c.id, "state", s.String())
	}
	c.state = s
}

func (c *Client) setHeld(a Assignment) {
	c.mu.Lock()
	c.held[a.Resource] = a
	c.mu.Unlock()
}

func (c *Client) dropHeld(res string) {
	c.mu.Lock()
	delete(c.held, res)
	c.mu.Unlock()
}

// registration is a client's node in the group.
type registration struct {
	id   string // c_<sequence>
	path string
}

// join creates the group's nodes if needed and registers a client node.
func (c *Client) join(ctx context.Context, sess *zkcoord.Session) (registration, error) {
	if err := c.lay.ensure(ctx, sess); err != nil {
		return registration{}, fmt.Errorf("rebalance: create group %s: %w", c.lay.base, err)
	}
	info := clientInfo{Name: c.opts.name, Host: hostname(), PID: pid(), Mode: c.opts.mode.String(), Weight: c.opts.weight}
	p, err := sess.CreateProtected(ctx, c.lay.clients(), clientPrefix, mustJSON(info), zkcoord.FlagEphemeralSequential)
	if err != nil {
		return registration{}, fmt.Errorf("rebalance: register in %s: %w", c.lay.base, err)
	}
	m, ok := parseClient(zkcoord.Base(p))
	if !ok {
		return registration{}, fmt.Errorf("%w: unexpected client node %s", ErrInconsistent, p)
	}
	c.mu.Lock()
	c.id = m.id
	c.mu.Unlock()
	c.log.Info("rebalance: joined", "group", c.lay.base, "client", m.id, "mode", c.opts.mode.String())
	return registration{id: m.id, path: p}, nil
}

// finish records the end of the client.
func (c *Client) finish(err error) {
	c.mu.Lock()
	if err == nil {
		c.state = Stopped
	} else {
		c.state, c.err = Aborted, err
	}
	c.held = map[string]Assignment{}
	c.mu.Unlock()
	if err != nil {
		c.log.Warn("rebalance: aborted", "group", c.lay.base, "err", err)
		if c.h.Aborted != nil {
			func() {
				defer func() {
					if r := recover(); r != nil {
						c.log.Error("rebalance: Aborted handler panicked", "panic", r)
					}
				}()
				c.h.Aborted(err)
			}()
		}
	}
	c.stopCause(ErrStopped) // release the context's resources
	close(c.done)
}
