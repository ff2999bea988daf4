package rebalance

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// rebalanceGlobal runs one rebalancing of the global-barrier mode:
//
//  1. status := StopActivity(g); every client stops everything it holds and
//     checks in by creating stopped/<id>.<g>;
//  2. once every client has checked in, the allocation is written;
//  3. status := ResourcesAssigned(g); every client starts its share and
//     checks out by deleting its check-in;
//  4. once every check-in is gone, status := StartConfirmed(g).
//
// Every write is conditional on the term. A membership or resource change
// cancels ctx; the next rebalancing uses generation g+1, so late check-ins
// and check-outs of g are never mistaken for those of g+1.
func (r *role) rebalanceGlobal(ctx context.Context, term int64) error {
	g, err := readGroup(ctx, r.sess, r.lay)
	if err != nil {
		return err
	}
	data, stStat, err := r.sess.Get(ctx, r.lay.status())
	if err != nil {
		return noNodeInconsistent(err)
	}
	st, err := decodeStatus(data)
	if err != nil {
		return err
	}
	ids := clientIDs(g.clients)
	next, err := r.allocate(ctx, g)
	if err != nil {
		return err
	}
	if next.Equal(g.record.Assignment) && st.Phase == PhaseStartConfirmed && st.Generation == g.record.Generation {
		return nil // settled, and nothing changed
	}
	gen := max(g.record.Generation, st.Generation) + 1
	version := stStat.Version

	setStatus := func(phase string) error {
		s, err := guardedSet(ctx, r.sess, r.lay, term, r.lay.status(),
			mustJSON(statusInfo{Phase: phase, Generation: gen, Term: term}), version)
		if err != nil {
			return err
		}
		version = s.Version
		r.log.Debug("rebalance: status", "phase", phase, "generation", gen)
		return nil
	}
	// Encoded before anyone stops: an allocation too large to write must
	// not stop the group.
	encoded, err := encodeAllocation(alloc.Record{Term: term, Generation: gen, Assignment: next})
	if err != nil {
		return err
	}
	if err := setStatus(PhaseStopActivity); err != nil {
		return err
	}
	if err := r.awaitCheckIns(ctx, ids, gen, true); err != nil {
		return err
	}
	if _, err := guardedSet(ctx, r.sess, r.lay, term, r.lay.resources(), encoded, g.recordStat.Version); err != nil {
		return err
	}
	if err := setStatus(PhaseResourcesAssigned); err != nil {
		return err
	}
	if err := r.awaitCheckIns(ctx, ids, gen, false); err != nil {
		return err
	}
	return setStatus(PhaseStartConfirmed)
}

// awaitCheckIns waits until every client of ids has checked in for gen
// (all == true) or none has a check-in for gen any more (all == false).
func (r *role) awaitCheckIns(ctx context.Context, ids []string, gen int64, all bool) error {
	for {
		kids, _, w, err := r.sess.ChildrenW(ctx, r.lay.stopped())
		if err != nil {
			return noNodeInconsistent(err)
		}
		in := make(map[string]bool, len(kids))
		for _, k := range kids {
			if id, g, ok := parseCheckIn(k); ok && g == gen {
				in[id] = true
			}
		}
		n := 0
		for _, id := range ids {
			if in[id] {
				n++
			}
		}
		if (all && n == len(ids)) || (!all && n == 0) {
			return nil
		}
		if _, err := recipe.WaitEvent(ctx, r.sess, w); err != nil {
			return err
		}
	}
}

// watchStatus feeds a global-barrier member: the status node and, once
// resources are assigned, the allocation of that generation.
func (m *member) watchStatus(ctx context.Context) {
	m.watchNode(ctx, m.lay.status(), func(ctx context.Context, data []byte, err error) (any, error) {
		ev := evStatus{err: err}
		if err == nil {
			ev.st, ev.err = decodeStatus(data)
		}
		if ev.err == nil && ev.st.Phase != PhaseStopActivity && ev.st.Generation > 0 {
			var rd []byte
			if rd, _, ev.err = m.sess.Get(ctx, m.lay.resources()); ev.err == nil {
				ev.rec, ev.err = alloc.Decode(rd)
			}
		}
		return ev, ev.err
	})
}

// onStatus applies a status reading.
func (m *member) onStatus(ev evStatus) {
	if ev.err != nil {
		m.failRead("status", ev.err)
		return
	}
	switch ev.st.Phase {
	case "":
		return // fresh group: no rebalancing yet
	case PhaseStopActivity:
		m.stopAll = true
		m.gen = ev.st.Generation
		m.desired = nil
	default:
		if ev.rec.Generation != ev.st.Generation {
			return // a newer status is on its way
		}
		m.stopAll = false
		m.setRecord(ev.rec)
	}
	m.phase = ev.st.Phase
}

// checkpoint performs the global-barrier check-in (all stopped during
// StopActivity) and check-out (own share started after ResourcesAssigned).
func (m *member) checkpoint() {
	if m.opts.mode != GlobalBarrier || m.closing || !m.settled() {
		return
	}
	switch {
	case m.phase == PhaseStopActivity && m.checkedIn != m.gen:
		name := checkInName(m.reg.id, m.gen)
		err := m.sess.Retry(m.ctx, func(ctx context.Context) error {
			_, err := m.sess.Create(ctx, m.lay.checkIn(name), nil, zkcoord.FlagEphemeral)
			if errors.Is(err, zkcoord.ErrNodeExists) {
				return nil
			}
			return err
		})
		if err != nil {
			m.failWrite("check in", err)
			return
		}
		old := m.checkedIn
		m.checkedIn = m.gen
		if old != 0 {
			m.deleteCheckIn(old)
		}
	case m.phase != PhaseStopActivity && m.checkedIn != 0:
		m.deleteCheckIn(m.checkedIn)
		m.checkedIn = 0
	}
}

func (m *member) deleteCheckIn(gen int64) {
	path := m.lay.checkIn(checkInName(m.reg.id, gen))
	if err := recipe.EnsureDeleted(m.ctx, m.sess, path); err != nil {
		m.failWrite("check out", err)
	}
}

func (m *member) failWrite(what string, err error) {
	if sessionEnded(err) || m.ctx.Err() != nil {
		return // the Session's end is handled by the loop
	}
	m.fail(fmt.Errorf("%w: %s: %w", ErrInconsistent, what, err))
}
