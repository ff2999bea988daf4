package election

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Election is one election path on one Session. It is cheap: it holds no
// node and no goroutine until it campaigns. Many candidates may
// share one Election (and one Session); each holds its own node. An
// Election is safe for concurrent use.
type Election struct {
	sess  *zkcoord.Session
	path  string
	opts  options
	lay   elect.Layout // the engine's view of this election's nodes
	hooks elect.Hooks  // test hooks of the engine

	// leaderNotified, if set, runs in a leader's goroutine when a watch
	// on its term or node fires, before it reacts (tests only).
	leaderNotified func(node string)

	mu         sync.Mutex
	ended      bool
	candidates map[*candidate]struct{}
}

// New returns the election at path (the directory that holds the
// participant nodes, Curator's latch path). The path is created, as a
// container, by the first candidate.
func New(sess *zkcoord.Session, path string, opts ...Option) (*Election, error) {
	if sess == nil {
		return nil, errors.New("election: nil Session")
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(sess, path); err != nil {
		return nil, err
	}
	e := &Election{sess: sess, path: path, opts: o, candidates: map[*candidate]struct{}{}}
	e.lay = e.layout()
	return e, nil
}

// Path returns the election path.
func (e *Election) Path() string { return e.path }

// ID returns the participant id of this Election's candidates.
func (e *Election) ID() string { return e.opts.id }

// TermPath and LeaderPath return the paths of the term and leader nodes.
func (e *Election) TermPath() string   { return e.opts.termPath }
func (e *Election) LeaderPath() string { return e.opts.ackPath }

// Campaign joins the election and blocks until this candidate leads, then
// returns its Leadership. If ctx ends first, the candidate withdraws (its
// node is deleted) and ctx's error is returned; ctx has no effect after
// Campaign returns. Leadership ends when the Session ends, or on Resign,
// deposition or deletion of the node: watch Leadership.Done. A candidate
// that finds a participant whose sequence number wrapped negative, before
// it leads, deletes its node and fails with an error wrapping
// zkcoord.ErrSequenceWrapped (see the package documentation).
func (e *Election) Campaign(ctx context.Context) (*Leadership, error) {
	c, err := e.nominate(ctx)
	if err != nil {
		return nil, err
	}
	select {
	case <-c.elected:
		return c.leadership, nil
	case <-c.done:
		// Finished before leading: it may still have led briefly.
		select {
		case <-c.elected:
			return c.leadership, nil
		default:
		}
		return nil, c.Err()
	case <-ctx.Done():
		c.withdraw()
		// It may have been elected meanwhile; either way it resigns.
		return nil, fmt.Errorf("election: campaign for %s: %w", e.path, ctx.Err())
	}
}

// nominate joins the election without waiting to lead: it creates the
// candidate's node and returns once its first role is known. If ctx ends
// first, the node is deleted and ctx's error returned; ctx has no effect
// after nominate returns. If its first look finds the election ended
// (ErrEnded) or a participant whose sequence number wrapped negative
// (zkcoord.ErrSequenceWrapped), its node is deleted and that error
// returned.
func (e *Election) nominate(ctx context.Context) (*candidate, error) {
	if err := e.sess.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLost, err)
	}
	c := newCandidate(e)
	if err := e.register(c); err != nil {
		return nil, err
	}
	if err := c.offer(ctx); err != nil {
		e.unregister(c)
		c.abort(err)
		return nil, err
	}
	go c.run()
	select {
	case <-c.placed:
		if err := c.Err(); errors.Is(err, ErrEnded) || errors.Is(err, zkcoord.ErrSequenceWrapped) {
			return nil, err // its first look saw the election ended, or wrapped
		}
		return c, nil
	case <-c.done:
		return nil, c.Err()
	case <-ctx.Done():
		c.withdraw()
		return nil, fmt.Errorf("election: nominate in %s: %w", e.path, ctx.Err())
	}
}

// withdraw resigns in the background, for a caller that gave up waiting.
func (c *candidate) withdraw() {
	ctx := c.el.sess.Context()
	go func() {
		if err := c.Resign(ctx); err != nil && !errors.Is(err, ErrLost) {
			c.el.opts.logger.Warn("election: could not withdraw candidate", "node", c.node, "err", err)
		}
	}()
}

func (e *Election) register(c *candidate) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return ErrEnded
	}
	e.candidates[c] = struct{}{}
	c.feed = fifo.NewFeed(e.opts.events)
	return nil
}

func (e *Election) unregister(c *candidate) {
	e.mu.Lock()
	delete(e.candidates, c)
	e.mu.Unlock()
}

// End ends the election for every participant: it marks the term node as
// ended, then deletes every participant node and the leader node. Every
// candidate, here or in other processes, finishes with ErrEnded (a leader
// through its term watch, a follower when its predecessor disappears);
// later Campaign calls, on any Election for this path, fail
// with ErrEnded. The term node stays as the marker; delete it to use the
// path for a new election. Curator's LeaderLatch knows nothing of this
// marker and recreates its node.
//
// If End fails before the term node is marked, nothing changed and the
// Election stays usable. If it fails later (deleting nodes, or waiting for
// local candidates), the election is ended; call End again to finish.
func (e *Election) End(ctx context.Context) error {
	return elect.Detach(ctx, func(ctx context.Context) error { return e.end(ctx) })
}

func (e *Election) end(ctx context.Context) error {
	data := []byte(`{"ended":true}`)
	err := e.sess.Retry(ctx, func(ctx context.Context) error {
		_, err := e.sess.Set(ctx, e.opts.termPath, data, -1)
		if errors.Is(err, zkcoord.ErrNoNode) {
			if err := e.sess.EnsurePath(ctx, zkcoord.Parent(e.opts.termPath)); err != nil {
				return err
			}
			_, err = e.sess.Create(ctx, e.opts.termPath, data, zkcoord.FlagPersistent)
			if errors.Is(err, zkcoord.ErrNodeExists) {
				return zkcoord.ErrConnectionClosed // raced with a creator: set again
			}
		}
		return err
	})
	if err != nil {
		// The term node is most likely not marked, so the Election stays
		// usable; if the mark was written after all, a new candidate sees it.
		return fmt.Errorf("election: end %s: %w", e.path, err)
	}
	// The mark is written: the election is ended, whether or not the rest
	// succeeds. Candidates registered by now are stopped; later ones are
	// refused.
	e.mu.Lock()
	e.ended = true
	local := make([]*candidate, 0, len(e.candidates))
	for c := range e.candidates {
		local = append(local, c)
	}
	e.mu.Unlock()
	for _, c := range local {
		c.stop(ErrEnded)
	}
	children, _, err := e.sess.Children(ctx, e.path)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return fmt.Errorf("election: end %s: %w", e.path, err)
	}
	var errs []error
	nodes, _ := participants(children)
	for _, n := range append(nodes, "") {
		p := e.opts.ackPath
		if n != "" {
			p = zkcoord.Join(e.path, n)
		}
		if err := recipe.EnsureDeleted(ctx, e.sess, p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range local {
		select {
		case <-c.done:
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("election: end %s: %w", e.path, err)
	}
	return nil
}
