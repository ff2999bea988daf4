package election

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/lockdelay"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// candidate is one participant node of an election, from its creation to
// its resignation or failure. Its state machine runs in one goroutine of
// its own; every method is safe for concurrent use.
type candidate struct {
	el   *Election
	node string // path of the candidate's node; fixed once offered
	name string // its last component

	runCtx    context.Context // cancelled, with the cause, to stop the machine
	cancelRun context.CancelCauseFunc

	placedOnce sync.Once
	placed     chan struct{} // closed once the first role is known
	elected    chan struct{} // closed once leading
	done       chan struct{} // closed once finished and the node handled

	delMu sync.Mutex // serialises node deletion after the machine ended

	// feed sends the candidate's events to the WithEvents channel and
	// closes placed and elected after the events that lead to them, off
	// the state machine's goroutine (see after); nil without a channel.
	// Set by register.
	feed *fifo.Feed[Event]

	// eng runs the election engine on the candidate's node; office is set
	// once the candidate took office (it wrote the leader node), even if
	// it failed before its leadership began. Both are owned by the state
	// machine's goroutine.
	eng    *elect.Contender
	office *elect.Office
	// delay follows the candidate for its lock-delay (WithLockDelay); nil
	// without one. Set by offer, then owned by the state machine.
	delay *lockdelay.Tracker

	mu         sync.Mutex
	state      snapshot
	leadership *Leadership
	nodeGone   bool  // the node is known to be deleted
	nodeErr    error // why it could not be deleted
	subs       map[*fifo.Queue[snapshot]]struct{}
}

func newCandidate(e *Election) *candidate {
	c := &candidate{
		el:      e,
		placed:  make(chan struct{}),
		elected: make(chan struct{}),
		done:    make(chan struct{}),
		subs:    map[*fifo.Queue[snapshot]]struct{}{},
		state:   snapshot{Role: roleOffering, ID: e.opts.id},
	}
	c.runCtx, c.cancelRun = context.WithCancelCause(context.Background())
	return c
}

// place marks the candidate's first role as known (once).
func (c *candidate) place() {
	c.placedOnce.Do(func() { c.after(func() { close(c.placed) }) })
}

// Role returns the candidate's current role.
func (c *candidate) Role() role {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Role
}

// State returns a snapshot of the candidate.
func (c *candidate) State() snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Node returns the path of the candidate's node.
func (c *candidate) Node() string { return c.node }

// ID returns the candidate's participant id.
func (c *candidate) ID() string { return c.el.opts.id }

// Leadership returns the candidate's leadership once it has been elected,
// nil before. It stays available (with Done closed) after it ended.
func (c *candidate) Leadership() *Leadership {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leadership
}

// Elected is closed when the candidate becomes leader (after
// EventElected was sent to the WithEvents channel).
func (c *candidate) Elected() <-chan struct{} { return c.elected }

// Done is closed when the candidate has finished: it resigned, its
// Session ended, it was deposed or its node was deleted. Err says why.
// It closes after the candidate's last events were sent to the WithEvents
// channel, or dropped because it had no room; a leader's Leadership.Done
// does not wait for that.
func (c *candidate) Done() <-chan struct{} { return c.done }

// Err returns nil while the candidate runs, then why it finished
// (ErrResigned after Resign).
func (c *candidate) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Role != roleFinished {
		return nil
	}
	return c.state.Err
}

// Watch returns a channel that first receives the current state and then
// every change, none dropped, until the Finished state, after which it is
// closed. It is also closed when ctx ends; cancel ctx when you stop reading.
func (c *candidate) Watch(ctx context.Context) <-chan snapshot {
	q := fifo.New[snapshot]()
	out := make(chan snapshot)
	c.mu.Lock()
	q.Push(c.state)
	if c.state.Role != roleFinished {
		c.subs[q] = struct{}{}
	}
	c.mu.Unlock()
	go q.Forward(ctx, out, func(s snapshot) bool { return s.Role == roleFinished }, func() {
		c.mu.Lock()
		delete(c.subs, q)
		c.mu.Unlock()
	})
	return out
}

// Resign withdraws the candidate: if it leads, its leadership ends (Done
// closes) before its node is deleted, so no successor can overlap with it.
// Resign waits, bounded by ctx, until the node is deleted, and reports if
// it could not be: then the node stays until the Session ends, blocking
// the candidates behind it. Resign on a finished candidate deletes the node
// if it is still there; it returns nil once the node is gone.
func (c *candidate) Resign(ctx context.Context) error {
	c.stop(ErrResigned)
	select {
	case <-c.done:
	case <-ctx.Done():
		return fmt.Errorf("election: resign %s: %w", c.node, ctx.Err())
	}
	return elect.Detach(ctx, func(context.Context) error {
		c.delMu.Lock()
		defer c.delMu.Unlock()
		c.mu.Lock()
		gone, nodeErr := c.nodeGone, c.nodeErr
		c.mu.Unlock()
		if gone {
			return nil
		}
		if c.el.sess.Err() == nil {
			nodeErr = recipe.EnsureDeleted(bg, c.el.sess, c.node)
			c.mu.Lock()
			c.nodeGone, c.nodeErr = nodeErr == nil, nodeErr
			c.mu.Unlock()
			if nodeErr == nil {
				return nil
			}
		}
		return fmt.Errorf("election: resign %s: node not deleted: %w", c.node, nodeErr)
	})
}

// stop asks the state machine to finish with cause (the first cause wins).
func (c *candidate) stop(cause error) { c.cancelRun(cause) }

// update changes the state and tells Watch subscribers.
func (c *candidate) update(f func(*snapshot)) {
	c.mu.Lock()
	f(&c.state)
	s := c.state
	for q := range c.subs {
		q.Push(s)
	}
	if s.Role == roleFinished {
		c.subs = nil
	}
	c.mu.Unlock()
}

// offer creates the candidate's node. It runs in the caller of nominate.
func (c *candidate) offer(ctx context.Context) error {
	e := c.el
	c.emit(Event{Type: EventOffer})
	ended, err := elect.DetachValue(ctx, e.isEnded)
	if err != nil {
		return c.wrap("nominate", err)
	} else if ended {
		return ErrEnded
	}
	if c.delay, err = c.arrive(ctx); err != nil {
		return c.wrap("nominate", err)
	}
	node, err := e.sess.CreateProtected(ctx, e.path, latchName, []byte(e.opts.id), zkcoord.FlagEphemeralSequential)
	if err != nil {
		return c.wrap("nominate", err)
	}
	c.node, c.name = node, zkcoord.Base(node)
	c.update(func(s *snapshot) { s.Node = node })
	c.emit(Event{Type: EventOffered})
	// End marks the term before it deletes participants: a node created
	// after that must see the mark, and withdraw. The candidate's first
	// look (elect.Contender.Determine) reads the term after the create,
	// together with the participants, and finishes with ErrEnded.
	return nil
}

// abort finishes a candidate whose offer failed.
func (c *candidate) abort(err error) {
	c.cancelRun(err)
	c.mu.Lock()
	c.nodeGone = true
	c.mu.Unlock()
	c.update(func(s *snapshot) { s.Role, s.Err = roleFinished, err })
	c.end()
}

// wrap turns an operation's error into the candidate's error: the stop
// cause if it was stopped, ErrLost if the Session ended.
func (c *candidate) wrap(op string, err error) error {
	if cause := context.Cause(c.runCtx); cause != nil {
		return cause
	}
	if serr := c.el.sess.Err(); serr != nil {
		return fmt.Errorf("%w: %w", ErrLost, serr)
	}
	return fmt.Errorf("election: %s %s: %w", op, c.el.path, err)
}

func (c *candidate) lostErr() error {
	return fmt.Errorf("%w: %w", ErrLost, c.el.sess.Err())
}

// bg is the context of the state machine's ZooKeeper calls. They are
// bounded by the Session's life (a call fails when the Session ends), and
// the machine checks runCtx between them; the Session's calls must not be
// abandoned half-way through by a cancelled context.
var bg = context.Background()

// finish ends leadership first, then deletes the node, then reports.
func (c *candidate) finish(cause error) {
	c.cancelRun(cause) // ends the state subscription too
	e := c.el
	c.mu.Lock()
	l := c.leadership
	c.mu.Unlock()
	if l != nil {
		l.end(cause)
		c.emit(Event{Type: EventLost, Err: cause, Token: l.token, Term: l.term})
	}

	c.delMu.Lock()
	var nodeErr error
	serr := e.sess.Err()
	switch {
	case errors.Is(cause, zkcoord.ErrNotOwner):
		// Not ours to delete.
		nodeErr = cause
	case serr == nil:
		if c.office != nil && !errors.Is(cause, ErrDeposed) && !errors.Is(cause, ErrEnded) {
			nodeErr = c.eng.Leave(bg, *c.office)
		} else {
			nodeErr = recipe.EnsureDeleted(bg, c.el.sess, c.node)
		}
	case errors.Is(serr, zkcoord.ErrSessionExpired):
		// The server deleted it.
	default:
		nodeErr = fmt.Errorf("%w: the node stays until the server expires the session: %w", ErrLost, serr)
	}
	c.mu.Lock()
	c.nodeGone, c.nodeErr = nodeErr == nil, nodeErr
	c.mu.Unlock()
	c.delMu.Unlock()

	e.unregister(c)
	c.update(func(s *snapshot) { s.Role, s.Err, s.Following, s.FollowingID = roleFinished, cause, "", "" })
	if errors.Is(cause, ErrResigned) {
		c.emit(Event{Type: EventResigned, Err: nodeErr})
	} else {
		c.emit(Event{Type: EventFailed, Err: cause})
	}
	c.place()
	c.end()
}
