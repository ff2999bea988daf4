package elect

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/lockdelay"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// ErrMissing: the contender's own node is gone (deleted by someone, or
// with its Session); the caller tells which.
var ErrMissing = errors.New("elect: own node missing")

// MaxRecheck caps the default re-check interval.
const MaxRecheck = 10 * time.Second

// DefaultRecheck is the re-check interval used when none is set: the
// Session's timeout, at most MaxRecheck.
func DefaultRecheck(sess *zkcoord.Session) time.Duration {
	if t := sess.Timeout(); t > 0 && t < MaxRecheck {
		return t
	}
	return MaxRecheck
}

// Config tunes a Contender.
type Config struct {
	// Recheck is how often a waiting follower reads the participants again
	// in case a notification was lost; 0 means DefaultRecheck.
	Recheck time.Duration
	// States, if set, feeds Session state changes to its handler while
	// the contender waits.
	States *StateFeed
	// Hooks, if set, lets tests interfere.
	Hooks *Hooks
	// Delay, if set, is the contender's lock-delay: a contender found
	// first waits it out in TakeOffice unless its predecessor released
	// cleanly, and Leave marks the release (see internal/lockdelay).
	Delay *lockdelay.Tracker
	// WatchOwn makes a follower watch its own node too, so that Wait
	// notices its deletion at once. Without it a follower's node is
	// watched only by its successor (one watch per node, as Curator's
	// LeaderLatch sets), and a leader watches its node from WatchTerm on.
	WatchOwn bool
}

// StateFeed hands Session state changes to On, in order, from the
// goroutine that owns the contender.
type StateFeed struct {
	C  <-chan zkcoord.StateChange
	On func(zkcoord.StateChange)
}

// Handle passes one value received from C to On; a closed C (ok false)
// stops the feed.
func (f *StateFeed) Handle(sc zkcoord.StateChange, ok bool) {
	if !ok {
		f.C = nil
		return
	}
	f.On(sc)
}

// Hooks are test hooks.
type Hooks struct {
	dropNext atomic.Bool
	dropped  atomic.Bool

	// AfterBump, if set, runs with the contender's node once its
	// transaction taking office is written, before the reads that follow
	// it are sent.
	AfterBump func(node string)
}

func (h *Hooks) afterBump(node string) {
	if h != nil && h.AfterBump != nil {
		h.AfterBump(node)
	}
}

// DropNextNotification makes the next notification from a predecessor's
// watch, or from a leader's term or node watch, be swallowed, as if
// ZooKeeper had lost it.
func (h *Hooks) DropNextNotification() { h.dropNext.Store(true) }

// Dropped reports whether a notification has been swallowed.
func (h *Hooks) Dropped() bool { return h.dropped.Load() }

func (h *Hooks) swallow() bool {
	if h == nil || !h.dropNext.CompareAndSwap(true, false) {
		return false
	}
	h.dropped.Store(true)
	return true
}

// Contender runs the engine for one participant node. It is owned by one
// goroutine.
type Contender struct {
	sess    *zkcoord.Session
	lay     *Layout
	node    string // path of the participant node
	name    string // its last component
	recheck time.Duration
	states  *StateFeed
	hooks   *Hooks
	watch   bool // WatchOwn
	delay   *lockdelay.Tracker

	own  *zkcoord.Stat        // the node's stat, read once
	ownW <-chan zkcoord.Event // watch on the node
}

// New returns a contender for the existing participant node node.
func New(sess *zkcoord.Session, lay *Layout, node string, cfg Config) *Contender {
	c := &Contender{sess: sess, lay: lay, node: node, name: zkcoord.Base(node),
		recheck: cfg.Recheck, states: cfg.States, hooks: cfg.Hooks, watch: cfg.WatchOwn, delay: cfg.Delay}
	if c.recheck <= 0 {
		c.recheck = DefaultRecheck(sess)
	}
	if c.states == nil {
		c.states = &StateFeed{}
	}
	return c
}

// Node returns the path of the contender's node.
func (c *Contender) Node() string { return c.node }

// Place is where Determine found the contender.
type Place struct {
	// Index is the contender's position; 0 leads.
	Index int
	// Pred is the path of the predecessor the contender watches, and
	// PredData its data (a participant id), when Index > 0.
	Pred     string
	PredData []byte

	predW  <-chan zkcoord.Event
	office *officeRead // read together with the listing, if it was
}

// Leads reports whether the contender's node is the first.
func (p Place) Leads() bool { return p.Index == 0 }

// officeRead is what taking office needs to know about the term and
// leader nodes.
type officeRead struct {
	termData   []byte
	term       *zkcoord.Stat
	termErr    error
	leaderRead bool          // the leader node was read
	leader     *zkcoord.Stat // nil when missing or not read
	ackErr     error
}

// bg bounds the engine's ZooKeeper calls by the Session's life only: the
// caller's context is checked between calls, so that no call is abandoned
// half-way through.
func bg(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// Determine reads every participant (never a cached view: any number of
// them may have gone, and, after the sequence counter wrapped, a newer node
// may sort first) and finds the contender's place, watching its
// predecessor unless it leads. The term read that taking office needs
// (and, on the first look, the own node's stat) travel with the listing, in
// the same round trip, on every look: a contender woken by its
// predecessor's deletion cannot tell whether that predecessor had come to
// lead since its own last look, and only one contender is woken per
// change, so the read costs one request per change. It fails with
// ErrMissing when the node is gone, and with the layout's Refuse or
// RefuseOrder error; the caller deletes the node then.
func (c *Contender) Determine(ctx context.Context) (Place, error) {
	var p Place
	pred, data, w, err := recipe.WatchPredecessor(bg(ctx), c.sess, func() (string, error) {
		if cause := context.Cause(ctx); cause != nil {
			return "", cause
		}
		var (
			children []string
			listErr  error
			ownErr   error
			rd       *officeRead
		)
		reads := []func(){func() { children, _, listErr = c.sess.Children(bg(ctx), c.lay.Dir) }}
		if c.own == nil {
			reads = append(reads, func() { ownErr = c.readOwn(bg(ctx), c.watch) })
		}
		rd = new(officeRead)
		reads = append(reads, func() { *rd = c.readOffice(bg(ctx), false) })
		Parallel(reads...)
		switch {
		case ownErr != nil:
			return "", ownErr
		case listErr != nil && !errors.Is(listErr, zkcoord.ErrNoNode):
			return "", listErr
		}
		sorted := c.lay.Order(children)
		i := Position(sorted, c.name)
		if i < 0 {
			return "", ErrMissing
		}
		if rd != nil && rd.termErr == nil {
			if err := c.lay.refuse(rd.termData); err != nil {
				return "", err
			}
		}
		if err := c.lay.refuseOrder(sorted); err != nil {
			return "", err
		}
		if i == 0 {
			p = Place{Index: 0, office: rd}
			return "", nil
		}
		p = Place{Index: i}
		c.delay.Behind(zkcoord.Join(c.lay.Dir, sorted[i-1]))
		return zkcoord.Join(c.lay.Dir, sorted[i-1]), nil
	})
	if err != nil {
		return Place{}, err
	}
	p.Pred, p.PredData, p.predW = pred, data, w
	return p, nil
}

// readOwn reads the contender's node, with a watch if watch is set.
func (c *Contender) readOwn(ctx context.Context, watch bool) error {
	ok, st, w, err := recipe.Read(ctx, c.node, watch, c.sess.Exists, c.sess.ExistsW)
	if err != nil {
		return err
	}
	return c.ownRead(ok, st, w)
}

// ownRead records a read of the contender's node: its stat and watch, or
// ErrMissing.
func (c *Contender) ownRead(ok bool, st *zkcoord.Stat, w <-chan zkcoord.Event) error {
	if !ok {
		return ErrMissing
	}
	c.own, c.ownW = st, w
	return nil
}

// ownGone says why the watch on the contender's own node fired: the
// Session's end, or else ErrMissing.
func (c *Contender) ownGone() error {
	if err := c.sess.Err(); err != nil {
		return err
	}
	return ErrMissing
}

// Wait blocks a follower until its place may have changed: its
// predecessor's watch fired (notified), or a periodic re-check found the
// predecessor gone or another in its place. It fails with ErrMissing when
// the contender's node is deleted, with the Session's error when the
// Session ends, and with ctx's cause when ctx ends.
func (c *Contender) Wait(ctx context.Context, p Place) (notified bool, err error) {
	rc := NewRecheck(bg(ctx), c.recheck, func(ctx context.Context) error { return c.moved(ctx, p) })
	defer rc.Stop()
	predW := p.predW
	for {
		select {
		case <-predW:
			if err := c.sess.Err(); err != nil {
				return false, err
			}
			if c.hooks.swallow() {
				predW = nil // as if the notification never came
				continue
			}
			return true, nil
		case <-c.ownW:
			return false, c.ownGone()
		case <-rc.Tick():
			rc.Start()
		case err := <-rc.Result():
			rc.Done()
			switch {
			case errors.Is(err, errMoved):
				return false, nil
			case err != nil && c.sess.Err() == nil && ctx.Err() == nil:
				return false, err
			}
		case sc, ok := <-c.states.C:
			c.states.Handle(sc, ok)
		case <-c.sess.Done():
			return false, c.sess.Err()
		case <-ctx.Done():
			return false, context.Cause(ctx)
		}
	}
}

// errMoved: the re-check found the contender's place changed.
var errMoved = errors.New("elect: place changed")

// moved is the periodic re-check: errMoved when the participants no
// longer have the contender right behind p's predecessor.
func (c *Contender) moved(ctx context.Context, p Place) error {
	children, _, err := c.sess.Children(ctx, c.lay.Dir)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return err
	}
	sorted := c.lay.Order(children)
	i := Position(sorted, c.name)
	if i <= 0 || zkcoord.Join(c.lay.Dir, sorted[i-1]) != p.Pred {
		return errMoved
	}
	return nil
}

// Position returns the index of name in sorted, or -1.
func Position(sorted []string, name string) int {
	for i, s := range sorted {
		if s == name {
			return i
		}
	}
	return -1
}
