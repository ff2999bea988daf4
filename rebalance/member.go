package rebalance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// stopRetryMin is the pause before Unassigned is called again after its
// first failure; it doubles with every further failure.
const stopRetryMin = 100 * time.Millisecond

// member owns this client's share of the resources, whatever its role: it
// follows the allocation (or, in global-barrier mode, the status), takes
// over each gained resource through its barrier, hands it to the Handler,
// and takes each lost resource away again. One goroutine (run) owns all of
// its state; barrier waits run in goroutines of their own and handler
// calls in the executor, all reporting back as events.
type member struct {
	c    *Client
	sess *zkcoord.Session
	lay  layout
	reg  registration
	opts options
	h    Handler
	log  *slog.Logger

	events chan any
	stopc  chan error
	dead   chan struct{} // closed when run stops reading events
	done   chan struct{} // closed when everything is stopped
	err    error         // why the member ended (nil after a stop request)

	ctx    context.Context // helpers' context; cancelled when run ends
	cancel context.CancelFunc
	wg     sync.WaitGroup
	exec   *executor

	// Owned by run.
	slots      map[string]*slot
	desired    map[string]bool   // resources allocated to this client
	alloc      alloc.Assignment  // the current allocation
	owners     map[string]string // owners looked up in alloc so far
	gen        int64             // generation of the current allocation
	attempts   uint64
	closing    bool
	closeCause error
	failure    error
	lost       bool // the Session ended
	stopAll    bool // global-barrier mode: StopActivity
	phase      string
	checkedIn  int64 // global-barrier mode: generation of our check-in
}

// slotState is where one resource is in its life on this client.
type slotState int

const (
	acquiring slotState = iota // waiting for the previous owner's barrier to go
	starting                   // barrier held; Assigned queued or running
	active                     // Assigned returned
	stopping                   // context cancelled; Unassigned and barrier deletion pending
)

// slot is one resource this client holds or is taking over or giving up.
type slot struct {
	res       string
	state     slotState
	gen       int64
	attempt   uint64
	cancelled bool               // acquisition cancelled
	stopAcq   context.CancelFunc // of the acquisition
	stopCause error              // why it is stopping: Unassigned's cause
	// Set before the slot reaches the executor, then read-only.
	ctx         context.Context
	cancel      context.CancelCauseFunc
	a           Assignment
	run         *runState
	barrierGone bool
	// served: the takeover was clean, or its lock-delay was waited out
	// (or there is none), so its release may mark the resource released.
	// A takeover given back during its delay leaves the mark "held": the
	// owner before it may still be paused.
	served bool
	// held: the version of the handover mark that the takeover left (-1:
	// unknown); it guards the release (releaseBarrier).
	held int32
}

// runState is owned by the executor.
type runState struct {
	started  bool // Assigned returned without error
	failures int  // failed calls of Unassigned
}

// Events reported to run.
type (
	evRecord struct {
		rec alloc.Record
		err error
	}
	evStatus struct {
		st  statusInfo
		rec alloc.Record
		err error
	}
	evAcquired struct {
		res     string
		attempt uint64
		token   int64
		watch   <-chan zkcoord.Event
		served  bool  // see slot.served
		held    int32 // see slot.held
		err     error
	}
	evAssigned struct {
		res     string
		attempt uint64
		err     error
	}
	evReleased struct {
		res     string
		attempt uint64
		err     error
	}
	// evStopFailed: Unassigned failed; it is called again after a pause.
	evStopFailed struct {
		res      string
		attempt  uint64
		failures int
		err      error
	}
	// evRetryStop: the pause after a failed Unassigned is over.
	evRetryStop struct {
		res     string
		attempt uint64
	}
	// evBarrierLost: the barrier was deleted or replaced by someone else
	// (err nil), or can no longer be watched (err says why; it may still
	// be this client's).
	evBarrierLost struct {
		res     string
		attempt uint64
		err     error
	}
)

func newMember(c *Client, sess *zkcoord.Session, reg registration) *member {
	m := &member{c: c, sess: sess, lay: c.lay, reg: reg, opts: c.opts, h: c.h,
		log:    c.log.With("group", c.lay.base, "client", reg.id),
		events: make(chan any, 64), stopc: make(chan error, 1),
		dead: make(chan struct{}), done: make(chan struct{}),
		slots: make(map[string]*slot)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.exec = &executor{m: m, notify: make(chan struct{}, 1)}
	return m
}

// stop asks the member to stop everything gracefully; it does not wait.
func (m *member) stop(cause error) {
	select {
	case m.stopc <- cause:
	case <-m.done:
	}
}

// send delivers an event to run, unless run has ended.
func (m *member) send(ev any) bool {
	select {
	case m.events <- ev:
		return true
	case <-m.dead:
		return false
	}
}

func (m *member) run() {
	m.wg.Add(2)
	go m.exec.run()
	if m.opts.mode == GlobalBarrier {
		go m.watchStatus(m.ctx)
	} else {
		go m.watchRecord(m.ctx)
	}
	sessDone := m.sess.Done()
	for !m.closing || len(m.slots) > 0 {
		select {
		case ev := <-m.events:
			m.handle(ev)
		case cause := <-m.stopc:
			m.close(cause)
		case <-sessDone:
			sessDone = nil
			m.lost = true
			m.close(m.sess.Err())
		}
		m.checkpoint()
	}
	if m.checkedIn != 0 && m.sess.Err() == nil {
		m.deleteCheckIn(m.checkedIn)
	}
	m.cancel()
	close(m.dead)
	m.exec.close()
	m.wg.Wait()
	m.err = m.failure
	if m.err == nil && m.lost {
		m.err = m.sess.Err()
	}
	close(m.done)
}

func (m *member) handle(ev any) {
	switch ev := ev.(type) {
	case evRecord:
		if ev.err != nil {
			m.failRead("allocation", ev.err)
			return
		}
		m.setRecord(ev.rec)
	case evStatus:
		m.onStatus(ev)
	case evAcquired:
		m.onAcquired(ev)
	case evAssigned:
		m.onAssigned(ev)
	case evReleased:
		m.onReleased(ev)
	case evStopFailed:
		m.onStopFailed(ev)
	case evRetryStop:
		if s := m.slots[ev.res]; s != nil && s.attempt == ev.attempt && s.state == stopping {
			m.pushStop(s)
		}
	case evBarrierLost:
		if s := m.slots[ev.res]; s != nil && s.attempt == ev.attempt && (s.state == starting || s.state == active) {
			m.onBarrierLost(s, ev.err)
		}
	}
	m.reconcile()
}

func (m *member) setRecord(rec alloc.Record) {
	m.gen = rec.Generation
	m.alloc, m.owners = rec.Assignment, nil
	mine := rec.Assignment[m.reg.id]
	m.desired = make(map[string]bool, len(mine))
	for _, r := range mine {
		m.desired[r] = true
	}
}

// owner looks up who owns res in the current allocation. Only resources
// this client gives up are looked up, so a change costs each member what
// it moves, not the size of the whole allocation.
func (m *member) owner(res string) (string, bool) {
	if o, ok := m.owners[res]; ok {
		return o, o != ""
	}
	o, ok := m.alloc.Owner(res)
	if m.owners == nil {
		m.owners = map[string]string{}
	}
	m.owners[res] = o
	return o, ok
}

// close starts the end of the member: every resource is stopped.
func (m *member) close(cause error) {
	if !m.closing {
		m.closing, m.closeCause = true, cause
	}
	m.reconcile()
}

// fail ends the member with err.
func (m *member) fail(err error) {
	if m.failure == nil {
		m.failure = err
		m.log.Warn("rebalance: stopping after failure", "err", err)
	}
	m.close(err)
}

func (m *member) failRead(what string, err error) {
	switch {
	case m.ctx.Err() != nil || sessionEnded(err):
		return // the Session's end is handled by run
	case errors.Is(err, zkcoord.ErrNoNode):
		m.fail(fmt.Errorf("%w: reading %s: %w", ErrInconsistent, what, err))
	default:
		m.fail(fmt.Errorf("rebalance: reading %s: %w", what, err))
	}
}

// dropCause says why slot s must be given up now, or nil to keep it.
func (m *member) dropCause(s *slot) error {
	switch {
	case m.closing:
		return m.closeCause
	case m.stopAll:
		return ErrRebalancing
	case !m.desired[s.res]:
		if o, ok := m.owner(s.res); ok && o != m.reg.id {
			return ErrMoved
		}
		return ErrRemoved
	case m.opts.mode != Incremental && s.gen != m.gen:
		return ErrRebalancing // these modes restart everything on a new allocation
	}
	return nil
}

// reconcile gives up what must go and starts taking over what is due.
func (m *member) reconcile() {
	draining := false
	for _, s := range m.slots {
		if cause := m.dropCause(s); cause != nil {
			m.drop(s, cause)
		}
		if s.gen != m.gen {
			draining = true
		}
	}
	if m.closing || m.stopAll || (draining && m.opts.mode != Incremental) {
		return
	}
	var gained []string
	for r := range m.desired {
		if _, ok := m.slots[r]; !ok {
			gained = append(gained, r)
		}
	}
	slices.Sort(gained)
	for _, r := range gained {
		m.acquire(r)
	}
}

// drop gives up a slot: an acquisition is cancelled; a started resource's
// context is cancelled and Unassigned queued, followed by the deletion of
// its barrier.
func (m *member) drop(s *slot, cause error) {
	switch s.state {
	case acquiring:
		if !s.cancelled {
			s.cancelled = true
			s.stopAcq()
		}
	case starting, active:
		s.state, s.stopCause = stopping, cause
		m.c.dropHeld(s.res)
		s.cancel(cause)
		m.pushStop(s)
	}
}

// pushStop queues the call of Unassigned for a stopping slot, followed by
// the deletion of its barrier unless the barrier is gone already.
func (m *member) pushStop(s *slot) {
	m.exec.push(job{s: s, cause: s.stopCause, del: !m.lost && !s.barrierGone})
}

// onStopFailed reports a failed Unassigned and calls it again after a
// pause (doubling from stopRetryMin up to the recovery backoff). The slot
// stays stopping meanwhile: its barrier keeps the next owner out, and the
// member, and so the Session, live on until a call succeeds.
func (m *member) onStopFailed(ev evStopFailed) {
	s := m.slots[ev.res]
	if s == nil || s.attempt != ev.attempt {
		return
	}
	d := stopRetryMin << min(ev.failures-1, 16)
	d = min(d, m.opts.maxBackoff)
	m.log.Error("rebalance: Unassigned failed; the resource stays fenced and Unassigned is called again",
		"resource", ev.res, "failures", ev.failures, "retry_in", d, "err", ev.err)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if delay.Sleep(m.ctx, d, nil) {
			m.send(evRetryStop{res: ev.res, attempt: ev.attempt})
		}
	}()
}

// onBarrierLost stops a resource whose barrier is no longer known to be
// ours. A barrier deleted or replaced by someone else is not ours to
// delete; one that could not be watched (err) may still be ours, so once
// the stop returned it is deleted, guarded by its token, lest the next
// owner wait for the end of the Session.
func (m *member) onBarrierLost(s *slot, err error) {
	if err == nil {
		m.log.Warn("rebalance: barrier deleted by someone else", "resource", s.res)
		s.barrierGone = true
		m.drop(s, ErrBarrierLost)
		return
	}
	m.log.Warn("rebalance: cannot watch barrier; stopping the resource", "resource", s.res, "err", err)
	m.drop(s, fmt.Errorf("%w: cannot watch it: %w", ErrBarrierLost, err))
}

// acquire starts taking over a resource: wait for its barrier to be free,
// create ours, then (after the start delay, and the lock-delay if the
// previous barrier vanished without a clean release) report back.
func (m *member) acquire(res string) {
	m.attempts++
	ctx, cancel := context.WithCancel(m.ctx)
	s := &slot{res: res, state: acquiring, gen: m.gen, attempt: m.attempts, stopAcq: cancel, run: &runState{}}
	m.slots[res] = s
	path, markPath, gen := m.lay.barrier(res), m.lay.handover(res), m.gen
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t, err := acquireBarrier(ctx, m.sess, path, markPath, m.reg.id, gen)
		served := t.clean || m.opts.lockDelay <= 0
		if err == nil {
			if d := m.takeoverDelay(res, t.clean); d > 0 {
				// Cancelled: reported as acquired, run sees the
				// cancellation. Waited out: the delay was at least the
				// lock-delay (takeoverDelay).
				if delay.Sleep(ctx, d, nil) {
					served = true
				}
			}
		}
		m.send(evAcquired{res: res, attempt: s.attempt, token: t.token, watch: t.watch, served: served, held: t.held, err: err})
	}()
}

// takeoverDelay is how long to wait between creating the barrier of res
// and calling Assigned: the start delay, or the lock-delay if longer and
// the previous barrier was not released cleanly. Both count from the
// create, which came after the previous barrier vanished.
func (m *member) takeoverDelay(res string, clean bool) time.Duration {
	d := m.opts.startDelay
	if !clean && m.opts.lockDelay > d {
		m.log.Info("rebalance: no clean release of the previous barrier on record; waiting the lock-delay",
			"resource", res, "lock_delay", m.opts.lockDelay)
		d = m.opts.lockDelay
	}
	return d
}

func (m *member) onAcquired(ev evAcquired) {
	s := m.slots[ev.res]
	if s == nil || s.attempt != ev.attempt || s.state != acquiring {
		return
	}
	s.stopAcq()
	if ev.err != nil {
		delete(m.slots, ev.res)
		if !s.cancelled && !m.lost && !sessionEnded(ev.err) {
			m.fail(fmt.Errorf("%w: taking over %s: %w", ErrInconsistent, ev.res, ev.err))
		}
		return
	}
	s.a = Assignment{Resource: s.res, Token: ev.token, Generation: s.gen, Client: m.reg.id, Barrier: m.lay.barrier(s.res)}
	s.served, s.held = ev.served, ev.held
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	if s.cancelled {
		// Taken over after all, but no longer wanted: give the barrier back
		// without starting the resource.
		s.state, s.stopCause = stopping, context.Canceled
		s.cancel(context.Canceled)
		m.pushStop(s)
		return
	}
	s.state = starting
	m.exec.push(job{s: s, assign: true})
	m.wg.Add(1)
	go m.watchBarrier(s.ctx, s, m.lay.barrier(s.res), ev.watch)
}

func (m *member) onAssigned(ev evAssigned) {
	s := m.slots[ev.res]
	if s == nil || s.attempt != ev.attempt {
		return
	}
	if ev.err != nil {
		m.fail(ev.err)
		return
	}
	if s.state == starting {
		s.state = active
		m.c.setHeld(s.a)
	}
}

func (m *member) onReleased(ev evReleased) {
	s := m.slots[ev.res]
	if s == nil || s.attempt != ev.attempt {
		return
	}
	delete(m.slots, ev.res)
	switch {
	case ev.err == nil:
	case !m.lost && !sessionEnded(ev.err):
		m.fail(fmt.Errorf("%w: giving up %s: %w", ErrInconsistent, ev.res, ev.err))
	}
}

// settled reports whether this client runs exactly its share.
func (m *member) settled() bool {
	for _, s := range m.slots {
		if s.state != active || !m.desired[s.res] {
			return false
		}
	}
	for r := range m.desired {
		if _, ok := m.slots[r]; !ok {
			return false
		}
	}
	return true
}

// watchRecord feeds the member the allocation (incremental and
// resource-barrier modes) through a data watch on the resources node.
func (m *member) watchRecord(ctx context.Context) {
	m.watchNode(ctx, m.lay.resources(), func(ctx context.Context, data []byte, err error) (any, error) {
		ev := evRecord{err: err}
		if err == nil {
			ev.rec, ev.err = alloc.Decode(data)
		}
		return ev, ev.err
	})
}

// watchNode reads the node at path with a data watch and sends the member
// what read makes of it, again after each change, until the member dies,
// ctx ends or the node cannot be read (that failure is sent too). A
// failure of read itself is sent unless ctx has ended.
func (m *member) watchNode(ctx context.Context, path string,
	read func(ctx context.Context, data []byte, err error) (ev any, failed error)) {
	defer m.wg.Done()
	for {
		data, _, w, err := m.sess.GetW(ctx, path)
		ev, failed := read(ctx, data, err)
		if failed != nil && ctx.Err() != nil {
			return
		}
		if !m.send(ev) || err != nil {
			return
		}
		if _, err := recipe.WaitEvent(ctx, m.sess, w); err != nil {
			return
		}
	}
}
