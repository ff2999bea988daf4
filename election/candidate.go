package election

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord/internal/fifo"

	"github.com/zkcoord/zkcoord"
)

// Candidate is one participant node of an election, from its creation to
// its resignation or failure. Its state machine runs in one goroutine of
// its own; every method is safe for concurrent use.
type Candidate struct {
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

	// events holds the WithEvents callbacks and the closing of placed,
	// elected and done, run in order by deliver, off the state machine's
	// goroutine; nil without a callback, when they run at once.
	events      *fifo.Queue[func()]
	deliverOnce sync.Once

	// office is set once the candidate took office (it wrote the leader
	// node), even if it failed before its leadership began. Owned by the
	// state machine's goroutine.
	office *office

	mu         sync.Mutex
	state      State
	leadership *Leadership
	nodeGone   bool  // the node is known to be deleted
	nodeErr    error // why it could not be deleted
	subs       map[*fifo.Queue[State]]struct{}
}

func newCandidate(e *Election) *Candidate {
	c := &Candidate{
		el:      e,
		placed:  make(chan struct{}),
		elected: make(chan struct{}),
		done:    make(chan struct{}),
		subs:    map[*fifo.Queue[State]]struct{}{},
		state:   State{Role: Offering, ID: e.opts.id},
	}
	c.runCtx, c.cancelRun = context.WithCancelCause(context.Background())
	if e.opts.events != nil {
		c.events = fifo.New[func()]()
	}
	return c
}

// place marks the candidate's first role as known (once).
func (c *Candidate) place() {
	c.placedOnce.Do(func() { c.after(func() { close(c.placed) }) })
}

// Role returns the candidate's current role.
func (c *Candidate) Role() Role {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Role
}

// State returns a snapshot of the candidate.
func (c *Candidate) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Node returns the path of the candidate's node.
func (c *Candidate) Node() string { return c.node }

// ID returns the candidate's participant id.
func (c *Candidate) ID() string { return c.el.opts.id }

// Leadership returns the candidate's leadership once it has been elected,
// nil before. It stays available (with Done closed) after it ended.
func (c *Candidate) Leadership() *Leadership {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leadership
}

// Elected is closed when the candidate becomes leader (after
// EventElected was delivered to a WithEvents callback).
func (c *Candidate) Elected() <-chan struct{} { return c.elected }

// Done is closed when the candidate has finished: it resigned, its
// Session ended, it was deposed or its node was deleted. Err says why.
// It closes after the candidate's last event was delivered to a WithEvents
// callback; a leader's Leadership.Done does not wait for that.
func (c *Candidate) Done() <-chan struct{} { return c.done }

// Err returns nil while the candidate runs, then why it finished
// (ErrResigned after Resign).
func (c *Candidate) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Role != Finished {
		return nil
	}
	return c.state.Err
}

// Watch returns a channel that first receives the current state and then
// every change, none dropped, until the Finished state, after which it is
// closed. It is also closed when ctx ends; cancel ctx when you stop reading.
func (c *Candidate) Watch(ctx context.Context) <-chan State {
	q := fifo.New[State]()
	out := make(chan State)
	c.mu.Lock()
	q.Push(c.state)
	if c.state.Role != Finished {
		c.subs[q] = struct{}{}
	}
	c.mu.Unlock()
	go q.Forward(ctx, out, func(s State) bool { return s.Role == Finished }, func() {
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
func (c *Candidate) Resign(ctx context.Context) error {
	c.stop(ErrResigned)
	select {
	case <-c.done:
	case <-ctx.Done():
		return fmt.Errorf("election: resign %s: %w", c.node, ctx.Err())
	}
	return detach(ctx, func(context.Context) error {
		c.delMu.Lock()
		defer c.delMu.Unlock()
		c.mu.Lock()
		gone, nodeErr := c.nodeGone, c.nodeErr
		c.mu.Unlock()
		if gone {
			return nil
		}
		if c.el.sess.Err() == nil {
			nodeErr = c.deleteNode(bg)
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
func (c *Candidate) stop(cause error) { c.cancelRun(cause) }

// update changes the state and tells Watch subscribers.
func (c *Candidate) update(f func(*State)) {
	c.mu.Lock()
	f(&c.state)
	s := c.state
	for q := range c.subs {
		q.Push(s)
	}
	if s.Role == Finished {
		c.subs = nil
	}
	c.mu.Unlock()
}

// offer creates the candidate's node. It runs in the caller of Nominate.
func (c *Candidate) offer(ctx context.Context) error {
	e := c.el
	c.emit(Event{Type: EventOffer})
	var ended bool
	err := detach(ctx, func(ctx context.Context) (err error) {
		ended, err = e.isEnded(ctx)
		return err
	})
	if err != nil {
		return c.wrap("nominate", err)
	} else if ended {
		return ErrEnded
	}
	node, err := e.sess.CreateProtected(ctx, e.path, latchName, []byte(e.opts.id), zkcoord.FlagEphemeralSequential)
	if err != nil {
		return c.wrap("nominate", err)
	}
	c.node, c.name = node, zkcoord.Base(node)
	c.update(func(s *State) { s.Node = node })
	c.emit(Event{Type: EventOffered})
	// End marks the term before it deletes participants: a node created
	// after that must see the mark, and withdraw.
	err = detach(ctx, func(ctx context.Context) (err error) {
		ended, err = e.isEnded(ctx)
		return err
	})
	if err != nil || ended {
		if derr := c.deleteNode(bg); derr != nil {
			e.opts.logger.Warn("election: could not delete node", "node", node, "err", derr)
		}
		if err != nil {
			return c.wrap("nominate", err)
		}
		return ErrEnded
	}
	return nil
}

// abort finishes a candidate whose offer failed.
func (c *Candidate) abort(err error) {
	c.cancelRun(err)
	c.mu.Lock()
	c.nodeGone = true
	c.mu.Unlock()
	c.update(func(s *State) { s.Role, s.Err = Finished, err })
	c.after(func() { close(c.done) })
}

// wrap turns an operation's error into the candidate's error: the stop
// cause if it was stopped, ErrLost if the Session ended.
func (c *Candidate) wrap(op string, err error) error {
	if cause := context.Cause(c.runCtx); cause != nil {
		return cause
	}
	if serr := c.el.sess.Err(); serr != nil {
		return fmt.Errorf("%w: %w", ErrLost, serr)
	}
	return fmt.Errorf("election: %s %s: %w", op, c.el.path, err)
}

func (c *Candidate) lostErr() error {
	return fmt.Errorf("%w: %w", ErrLost, c.el.sess.Err())
}

// bg is the context of the state machine's ZooKeeper calls. They are
// bounded by the Session's life (a call fails when the Session ends), and
// the machine checks runCtx between them; the Session's calls must not be
// abandoned half-way through by a cancelled context.
var bg = context.Background()

// detach runs f with a context that does not end with ctx, and returns
// early, with ctx's error, when ctx ends. f must not write anything the
// caller reads after an early return.
func detach(ctx context.Context, f func(ctx context.Context) error) error {
	if ctx.Done() == nil {
		return f(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- f(context.WithoutCancel(ctx)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the candidate's state machine.
func (c *Candidate) run() {
	states := c.el.sess.Watch(c.runCtx)
	cause := c.loop(states)
	c.finish(cause)
}

func (c *Candidate) loop(states <-chan zkcoord.StateChange) error {
	notified := false
	for {
		c.emit(Event{Type: EventDetermine, Notified: notified})
		pred, predID, w, err := c.determine()
		if err != nil {
			return err
		}
		if pred == "" {
			return c.lead(states)
		}
		c.update(func(s *State) { s.Role, s.Following, s.FollowingID = Following, pred, predID })
		c.emit(Event{Type: EventFollowing, Following: pred, FollowingID: predID})
		c.place()
	wait:
		for {
			select {
			case <-w:
				if c.el.sess.Err() != nil {
					return c.lostErr()
				}
				notified = true
				break wait
			case sc, ok := <-states:
				if !ok {
					states = nil
					continue
				}
				c.sessionEvent(sc)
			case <-c.el.sess.Done():
				return c.lostErr()
			case <-c.runCtx.Done():
				return context.Cause(c.runCtx)
			}
		}
	}
}

// determine reads every participant (never a cached view: any number of
// them may have gone, and, after the sequence counter wrapped, a newer node
// may sort first) and either reports that the candidate's node is the
// lowest (pred == "") or watches the predecessor.
func (c *Candidate) determine() (pred, predID string, w <-chan zkcoord.Event, err error) {
	e := c.el
	for {
		if cause := context.Cause(c.runCtx); cause != nil {
			return "", "", nil, cause
		}
		children, _, err := e.sess.Children(bg, e.path)
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return "", "", nil, c.wrap("read participants of", err)
		}
		sorted, ignored := participants(children)
		if len(ignored) > 0 {
			e.opts.logger.Debug("election: ignoring children that are not participants", "path", e.path, "names", ignored)
		}
		i := position(sorted, c.name)
		switch {
		case i < 0:
			return "", "", nil, c.missing()
		case i == 0:
			return "", "", nil, nil
		}
		pred = zkcoord.Join(e.path, sorted[i-1])
		data, _, w, err := e.sess.GetW(bg, pred)
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue // gone before we could watch it: look again
		}
		if err != nil {
			return "", "", nil, c.wrap("watch predecessor in", err)
		}
		return pred, string(data), w, nil
	}
}

// missing explains why the candidate's node is gone.
func (c *Candidate) missing() error {
	if c.el.sess.Err() != nil {
		return c.lostErr()
	}
	if ended, err := c.el.isEnded(bg); err == nil && ended {
		return ErrEnded
	}
	if cause := context.Cause(c.runCtx); cause != nil {
		return cause
	}
	return fmt.Errorf("%w: %s", ErrNodeDeleted, c.node)
}

// lead takes office and holds it until loss.
func (c *Candidate) lead(states <-chan zkcoord.StateChange) error {
	e := c.el
	off, err := c.takeOffice(bg)
	switch {
	case errors.Is(err, errNodeMissing):
		return c.missing()
	case errors.Is(err, ErrEnded), errors.Is(err, zkcoord.ErrNotOwner):
		return err
	case err != nil:
		return c.wrap("take office in", err)
	}
	// From here on, finish deletes the leader node with the candidate's
	// node, guarded by the term, even if the checks below fail.
	c.office = &off
	if h := e.afterTakeOffice; h != nil {
		h(c.node)
	}
	token := off.token
	// Watch the term (a bump by anyone else deposes this leader) and the
	// own node (deleted by someone else), with both requests in flight at
	// once.
	var (
		data             []byte
		tst              *zkcoord.Stat
		termW, nodeW     <-chan zkcoord.Event
		termErr, nodeErr error
	)
	parallel(
		func() { data, tst, termW, termErr = e.sess.GetW(bg, e.opts.termPath) },
		func() { _, _, nodeW, nodeErr = e.sess.GetW(bg, c.node) },
	)
	switch {
	case errors.Is(termErr, zkcoord.ErrNoNode):
		// The leader node cannot be deleted under a term guard now; it
		// stays until the session ends but names a node that finish
		// deletes, so observers do not see it as Acting.
		return fmt.Errorf("%w: term node deleted", ErrDeposed)
	case termErr != nil:
		return c.wrap("watch term in", termErr)
	case tst.Version != off.version:
		return termChanged(data)
	case errors.Is(nodeErr, zkcoord.ErrNoNode):
		return c.missing()
	case nodeErr != nil:
		return c.wrap("watch own node in", nodeErr)
	}

	l := newLeadership(c, token, off)
	c.mu.Lock()
	c.leadership = l
	c.mu.Unlock()
	c.update(func(s *State) {
		s.Role, s.Following, s.FollowingID, s.Token, s.Term = Leading, "", "", token, off.term
	})
	c.emit(Event{Type: EventElected, Token: token, Term: off.term})
	c.after(func() { close(c.elected) })
	c.place()

	for {
		select {
		// A notification ends the leadership at once, before anything is
		// asked of ZooKeeper: a successor may act as soon as the change
		// that fired it is committed, and a read may take until the
		// Session is declared Lost. The read only explains why (Err).
		case <-termW:
			if e.sess.Err() != nil {
				return c.lostErr()
			}
			if h := e.leaderNotified; h != nil {
				h(c.node)
			}
			l.end(fmt.Errorf("%w: the term node changed", ErrDeposed))
			data, _, err := e.sess.Get(bg, e.opts.termPath)
			if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
				return fmt.Errorf("%w: term changed (%v)", ErrDeposed, err)
			}
			return termChanged(data)
		case <-nodeW:
			if e.sess.Err() != nil {
				return c.lostErr()
			}
			if h := e.leaderNotified; h != nil {
				h(c.node)
			}
			l.end(fmt.Errorf("%w: %s", ErrNodeDeleted, c.node))
			return c.missing()
		case sc, ok := <-states:
			if !ok {
				states = nil
				continue
			}
			c.sessionEvent(sc)
		case <-e.sess.Done():
			return c.lostErr()
		case <-c.runCtx.Done():
			return context.Cause(c.runCtx)
		}
	}
}

// termChanged explains a change of the term node seen by a leader.
func termChanged(data []byte) error {
	r, err := decodeTerm(data)
	switch {
	case err != nil:
		return fmt.Errorf("%w: term node rewritten with data this package cannot read", ErrDeposed)
	case r.Ended:
		return ErrEnded
	}
	return fmt.Errorf("%w: term taken by %q (%s)", ErrDeposed, r.ID, r.Node)
}

func (c *Candidate) sessionEvent(sc zkcoord.StateChange) {
	switch sc.State {
	case zkcoord.Suspended:
		c.emit(Event{Type: EventSuspended})
	case zkcoord.Reconnected:
		c.emit(Event{Type: EventReconnected})
	}
}

// finish ends leadership first, then deletes the node, then reports.
func (c *Candidate) finish(cause error) {
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
			nodeErr = c.leaveOffice(bg, c.office.version)
		} else {
			nodeErr = c.deleteNode(bg)
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
	c.update(func(s *State) { s.Role, s.Err, s.Following, s.FollowingID = Finished, cause, "", "" })
	if errors.Is(cause, ErrResigned) {
		c.emit(Event{Type: EventResigned, Err: nodeErr})
	} else {
		c.emit(Event{Type: EventFailed, Err: cause})
	}
	c.place()
	c.after(func() { close(c.done) })
}
