package rebalance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// errConflict: the allocation or status node changed under the coordinator
// (a concurrent write); the rebalancing is retried with fresh data.
var errConflict = errors.New("rebalance: concurrent write to the group")

// coordinate is the coordinator state. It bumps the term, watches the
// clients, the resources and the term, and runs a rebalancing after every
// change, at most one at a time and no two starts closer than the minimum
// interval; a change during a rebalancing aborts it and a new one follows.
func (r *role) coordinate(ctx context.Context, ownLost <-chan struct{}) error {
	r.c.setState(Coordinator)
	term, err := r.bumpTerm(ctx)
	if err != nil {
		return r.classify(ctx, err)
	}
	r.log.Info("rebalance: coordinator", "term", term)

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clientsCh := watchChildren(ctx, &wg, r.sess, r.lay.clients())
	resourcesCh := watchChildren(ctx, &wg, r.sess, r.lay.resources())
	termCh := watchData(ctx, &wg, r.sess, r.lay.term())

	var (
		results   = make(chan error, 1)
		abort     context.CancelFunc // of the running rebalancing, if any
		pending   bool               // a rebalancing is due
		seen      int                // first snapshots of clients and resources seen
		lastStart time.Time
		notBefore time.Time // after a failed attempt
		failures  int
		timer     = time.NewTimer(time.Hour)
	)
	defer timer.Stop()
	kick := func() {
		if abort != nil || !pending || seen < 2 {
			return
		}
		at := lastStart.Add(r.opts.minInterval)
		if notBefore.After(at) {
			at = notBefore
		}
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			return
		}
		pending, lastStart = false, time.Now()
		var rctx context.Context
		rctx, abort = context.WithCancel(ctx)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- r.rebalance(rctx, term)
		}()
	}
	trigger := func() {
		pending = true
		if abort != nil {
			abort() // its view is stale; it reports back, then the next starts
		}
		kick()
	}
	for {
		select {
		case s := <-clientsCh:
			if s.err != nil {
				return r.classify(ctx, s.err)
			}
			if indexOf(parseClients(s.children), r.reg.id) < 0 {
				return fmt.Errorf("%w: %s", ErrMembershipLost, r.reg.path)
			}
			seen = min(seen+1, 2)
			trigger()
		case s := <-resourcesCh:
			if s.err != nil {
				return r.classify(ctx, s.err)
			}
			seen = min(seen+1, 2)
			trigger()
		case s := <-termCh:
			if s.err != nil {
				return r.classify(ctx, s.err)
			}
			if int64(s.stat.Version) != term {
				return fmt.Errorf("%w: term %d, now %d", ErrDeposed, term, s.stat.Version)
			}
		case err := <-results:
			abort()
			abort = nil
			switch {
			case err == nil:
				failures = 0
			case errors.Is(err, context.Canceled) && ctx.Err() == nil:
				// aborted by a change: pending is set
			case r.sess.Err() != nil:
				return r.sess.Err()
			case errors.Is(err, alloc.ErrTooLarge):
				// Every coordinator would fail the same way: aborting would
				// take the whole group down one client after another. The
				// last allocation stays in force; the next change of
				// clients or resources tries again.
				failures = 0
				r.log.Error("rebalance: new allocation too large to write; the last one stays in force until the group changes", "err", err)
			case errors.Is(err, ErrDeposed), !recoverable(err), errors.Is(err, ErrInconsistent):
				return err
			default:
				failures++
				notBefore = time.Now().Add(retryDelay(failures))
				pending = true
				r.log.Info("rebalance: rebalancing failed, retrying", "err", err, "attempt", failures)
			}
			kick()
		case <-timer.C:
			kick()
		case <-ownLost:
			return fmt.Errorf("%w: %s", ErrMembershipLost, r.reg.path)
		case <-ctx.Done():
			if abort != nil {
				abort()
				<-results
			}
			return ctx.Err()
		case <-r.sess.Done():
			return r.sess.Err()
		}
	}
}

func retryDelay(failures int) time.Duration {
	return min(25*time.Millisecond<<min(failures, 6), time.Second)
}

// bumpTerm writes the term node, making its version this coordinator's
// term. Any later write by another coordinator changes the version, which
// this coordinator's watch sees, and makes every write of this coordinator
// fail (they are all conditional on the term's version).
func (r *role) bumpTerm(ctx context.Context) (int64, error) {
	data := mustJSON(termInfo{Coordinator: r.reg.id})
	var st *zkcoord.Stat
	err := r.sess.Retry(ctx, func(ctx context.Context) error {
		var err error
		st, err = r.sess.Set(ctx, r.lay.term(), data, -1)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("rebalance: bump term: %w", err)
	}
	return int64(st.Version), nil
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
	ids := clientIDs(g.clients)
	var next alloc.Assignment
	if r.opts.mode == Incremental {
		next = alloc.Sticky(g.record.Assignment, ids, g.resources)
	} else {
		next = alloc.Balanced(ids, g.resources)
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
		"clients", len(ids), "resources", len(g.resources), "moved", len(alloc.Moved(g.record.Assignment, next)))
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
	var g groupState
	kids, _, err := sess.Children(ctx, lay.clients())
	if err != nil {
		return g, noNodeInconsistent(err)
	}
	g.clients = parseClients(kids)
	res, _, err := sess.Children(ctx, lay.resources())
	if err != nil {
		return g, noNodeInconsistent(err)
	}
	g.resources = parseResources(res)
	data, st, err := sess.Get(ctx, lay.resources())
	if err != nil {
		return g, noNodeInconsistent(err)
	}
	g.record, err = alloc.Decode(data)
	if err != nil {
		return g, fmt.Errorf("rebalance: allocation in %s: %w", lay.resources(), err)
	}
	g.recordStat = st
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
	res, err := sess.Multi(ctx, zkcoord.CheckOp(lay.term(), int32(term)), zkcoord.SetOp(path, data, version))
	if err == nil {
		return res[1].Stat, nil
	}
	if len(res) == 2 {
		if e := res[0].Error; errors.Is(e, zkcoord.ErrBadVersion) || errors.Is(e, zkcoord.ErrNoNode) {
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
