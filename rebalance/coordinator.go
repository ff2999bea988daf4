package rebalance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// errConflict: the allocation or status node changed under the coordinator
// (a concurrent write); the rebalancing is retried with fresh data.
var errConflict = errors.New("rebalance: concurrent write to the group")

// coordinate is the coordinator state. It takes office (bumps the term)
// through the election engine, watches the clients, the resources and the
// term, and runs a rebalancing
// after every change, at most one at a time and no two starts closer than
// the minimum interval; a change during a rebalancing aborts it and a new
// one follows.
func (r *role) coordinate(ctx context.Context, con *elect.Contender, p elect.Place) error {
	r.c.setState(Coordinator)
	off, err := con.TakeOffice(ctx, p)
	if err != nil {
		return r.classify(ctx, err)
	}
	term := off.Term
	defer r.c.setAllocationError(nil) // a refusal is the coordinator's

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The watches of the clients and resources go out with the term's,
	// in the same round trip.
	clientsCh := watchChildren(ctx, &wg, r.sess, r.lay.clients())
	resourcesCh := watchChildren(ctx, &wg, r.sess, r.lay.resources())
	termW, err := r.watchTerm(ctx, con, off)
	if err != nil {
		return err
	}
	r.log.Info("rebalance: coordinator", "term", term)
	s := &schedule{r: r, ctx: ctx, wg: &wg, term: term, results: make(chan error, 1), timer: time.NewTimer(time.Hour)}
	defer s.timer.Stop()
	// The term and the own node, watched and re-checked in case a
	// notification was lost.
	tenure := con.Keep(off, termW)
	defer tenure.Stop()
	for {
		select {
		case snap := <-clientsCh:
			if snap.err != nil {
				return r.classify(ctx, snap.err)
			}
			if indexOf(parseClients(snap.children), r.reg.id) < 0 {
				return fmt.Errorf("%w: %s", ErrMembershipLost, r.reg.path)
			}
			s.seen = min(s.seen+1, 2)
			s.trigger()
		case snap := <-resourcesCh:
			if snap.err != nil {
				return r.classify(ctx, snap.err)
			}
			s.seen = min(s.seen+1, 2)
			s.trigger()
		case end := <-tenure.Over():
			switch {
			case r.sess.Err() != nil:
				return r.sess.Err()
			case errors.Is(end, elect.ErrMissing):
				return fmt.Errorf("%w: %s", ErrMembershipLost, r.reg.path)
			}
			return fmt.Errorf("%w: term %d: %w", ErrDeposed, term, end)
		case err := <-s.results:
			if err := s.finished(err); err != nil {
				return err
			}
			s.kick()
		case <-s.timer.C:
			s.kick()
		case <-ctx.Done():
			s.stop()
			return ctx.Err()
		case <-r.sess.Done():
			return r.sess.Err()
		}
	}
}

// watchTerm watches the term this client took office in: any change
// deposes it.
func (r *role) watchTerm(ctx context.Context, con *elect.Contender, off elect.Office) (<-chan zkcoord.Event, error) {
	termW, _, err := con.WatchTerm(ctx, off)
	switch {
	case errors.Is(err, elect.ErrTermGone), errors.Is(err, elect.ErrTermChanged):
		return nil, fmt.Errorf("%w: term %d: %w", ErrDeposed, off.Term, err)
	case err != nil:
		return nil, r.classify(ctx, err)
	}
	return termW, nil
}

// schedule runs the coordinator's rebalancings: one at a time, spaced by
// the minimum interval, retried with backoff after a failure. It is owned
// by the coordinator's goroutine.
type schedule struct {
	r       *role
	ctx     context.Context
	wg      *sync.WaitGroup
	term    int64
	results chan error

	abort     context.CancelFunc // of the running rebalancing, if any
	pending   bool               // a rebalancing is due
	seen      int                // first snapshots of clients and resources seen
	lastStart time.Time
	notBefore time.Time // after a failed attempt
	failures  int
	timer     *time.Timer
}

// kick starts the due rebalancing if nothing runs and the spacing allows,
// or sets the timer for when it will.
func (s *schedule) kick() {
	if s.abort != nil || !s.pending || s.seen < 2 {
		return
	}
	at := s.lastStart.Add(s.r.opts.minInterval)
	if s.notBefore.After(at) {
		at = s.notBefore
	}
	if wait := time.Until(at); wait > 0 {
		s.timer.Reset(wait)
		return
	}
	s.pending, s.lastStart = false, time.Now()
	var rctx context.Context
	rctx, s.abort = context.WithCancel(s.ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.results <- s.r.rebalance(rctx, s.term)
	}()
}

// trigger makes a rebalancing due after a change, aborting a running one
// (its view is stale; it reports back, then the next starts).
func (s *schedule) trigger() {
	s.pending = true
	if s.abort != nil {
		s.abort()
	}
	s.kick()
}

// finished takes a rebalancing's result; an error it returns ends the
// coordinator.
func (s *schedule) finished(err error) error {
	r := s.r
	s.abort()
	s.abort = nil
	switch {
	case err == nil:
		s.failures = 0
		r.c.setAllocationError(nil)
	case errors.Is(err, context.Canceled) && s.ctx.Err() == nil:
		// aborted by a change: pending is set
	case r.sess.Err() != nil:
		return r.sess.Err()
	case errors.Is(err, alloc.ErrTooLarge):
		// Every coordinator would fail the same way: aborting would
		// take the whole group down one client after another. The
		// last allocation stays in force; the next change of
		// clients or resources tries again.
		s.failures = 0
		r.log.Error("rebalance: new allocation too large to write; the last one stays in force until the group changes", "err", err)
	case errors.Is(err, ErrAllocationRefused):
		// As above: the allocation in force stays; the next change of
		// clients or resources tries again.
		s.failures = 0
		r.c.setAllocationError(err)
		r.log.Error("rebalance: allocation refused; the last one stays in force until the group changes", "err", err)
	case errors.Is(err, ErrDeposed), !recoverable(err), errors.Is(err, ErrInconsistent):
		return err
	default:
		s.failures++
		s.notBefore = time.Now().Add(retryDelay(s.failures))
		s.pending = true
		r.log.Info("rebalance: rebalancing failed, retrying", "err", err, "attempt", s.failures)
	}
	return nil
}

// stop aborts a running rebalancing and waits for its result.
func (s *schedule) stop() {
	if s.abort != nil {
		s.abort()
		<-s.results
	}
}

func retryDelay(failures int) time.Duration {
	return min(25*time.Millisecond<<min(failures, 6), time.Second)
}

// rebalance runs one rebalancing in the client's mode.
func (r *role) rebalance(ctx context.Context, term int64) error {
	if r.opts.mode == GlobalBarrier {
		return r.rebalanceGlobal(ctx, term)
	}
	g, err := readGroup(ctx, r.sess, r.lay)
	if err != nil {
		return err
	}
	next, err := r.allocate(ctx, g)
	if err != nil {
		return err
	}
	if next.Equal(g.record.Assignment) {
		return nil
	}
	rec := alloc.Record{Term: term, Generation: g.record.Generation + 1, Assignment: next}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := writeAllocation(ctx, r.sess, r.lay, term, g.recordStat.Version, rec); err != nil {
		return err
	}
	r.log.Debug("rebalance: allocation written", "generation", rec.Generation,
		"clients", len(g.clients), "resources", len(g.resources), "moved", len(alloc.Moved(g.record.Assignment, next)))
	return nil
}

// groupState is what a coordinator reads before a rebalancing.
type groupState struct {
	clients    []memberNode
	resources  []string
	record     alloc.Record
	recordStat *zkcoord.Stat
}

func readGroup(ctx context.Context, sess *zkcoord.Session, lay layout) (groupState, error) {
	// The three reads share one round trip; ZooKeeper answers them in
	// order, as if they had been sent one after the other.
	var (
		g                    groupState
		kids, res            []string
		data                 []byte
		kidsErr, resErr, err error
	)
	elect.Parallel(
		func() { kids, _, kidsErr = sess.Children(ctx, lay.clients()) },
		func() { res, _, resErr = sess.Children(ctx, lay.resources()) },
		func() { data, g.recordStat, err = sess.Get(ctx, lay.resources()) },
	)
	if err := cmp.Or(kidsErr, resErr, err); err != nil {
		return g, noNodeInconsistent(err)
	}
	g.clients, g.resources = parseClients(kids), parseResources(res)
	if g.record, err = alloc.Decode(data); err != nil {
		return g, fmt.Errorf("rebalance: allocation in %s: %w", lay.resources(), err)
	}
	return g, nil
}

func noNodeInconsistent(err error) error {
	if errors.Is(err, zkcoord.ErrNoNode) {
		return fmt.Errorf("%w: %w", ErrInconsistent, err)
	}
	return err
}

// writeAllocation writes rec into the resources node if the resources node
// still has version and the term node still has version term: a deposed
// (zombie) coordinator's write always fails, with ErrDeposed.
func writeAllocation(ctx context.Context, sess *zkcoord.Session, lay layout, term int64, version int32, rec alloc.Record) (*zkcoord.Stat, error) {
	data, err := encodeAllocation(rec)
	if err != nil {
		return nil, err
	}
	return guardedSet(ctx, sess, lay, term, lay.resources(), data, version)
}

// maxAllocation bounds an encoded allocation (lowered by tests).
var maxAllocation = alloc.MaxEncodedSize

// encodeAllocation encodes rec, failing with alloc.ErrTooLarge beyond
// maxAllocation.
func encodeAllocation(rec alloc.Record) ([]byte, error) {
	data, err := alloc.Encode(rec)
	if err == nil && len(data) > maxAllocation {
		err = fmt.Errorf("%w: %d bytes (limit %d)", alloc.ErrTooLarge, len(data), maxAllocation)
	}
	if err != nil {
		return nil, fmt.Errorf("rebalance: encode allocation: %w", err)
	}
	return data, nil
}

// guardedSet sets path's data at version, only while the term is term.
func guardedSet(ctx context.Context, sess *zkcoord.Session, lay layout, term int64, path string, data []byte, version int32) (*zkcoord.Stat, error) {
	res, err := sess.Multi(ctx, elect.Guard(lay.term(), term), zkcoord.SetOp(path, data, version))
	if err == nil {
		return res[1].Stat, nil
	}
	if len(res) == 2 {
		if e := res[0].Error; elect.Over(e) {
			return nil, fmt.Errorf("%w: term %d is over: %w", ErrDeposed, term, e)
		}
		if e := res[1].Error; errors.Is(e, zkcoord.ErrBadVersion) {
			return nil, fmt.Errorf("%w: %s changed: %w", errConflict, path, e)
		}
		if e := res[1].Error; errors.Is(e, zkcoord.ErrNoNode) {
			return nil, fmt.Errorf("%w: %s: %w", ErrInconsistent, path, e)
		}
	}
	return nil, err
}
