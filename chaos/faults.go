package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// FaultRecord is what happened to one fault of the schedule.
type FaultRecord struct {
	N      int    `json:"n"`
	Fault  Fault  `json:"fault"`
	Detail string `json:"detail"` // the fault with its targets resolved
	// Start and Healed bound the fault (event.Now times, ns): Healed is
	// when its last part ended (the restart, resume or heal began, or an
	// instant fault was done). Converged is when the group had settled
	// again (0 if it did not within the limit).
	Start     int64 `json:"start"`
	Healed    int64 `json:"healed"`
	Converged int64 `json:"converged,omitempty"`
	// Converge is Converged - Healed: the time to converge after the fault.
	Converge time.Duration `json:"converge_ns,omitempty"`
	OK       bool          `json:"ok"`
	Why      string        `json:"why,omitempty"` // why it did not converge
}

// Span is a stretch of time during which a fault held a process: a client
// paused, partitioned or down, a ZooKeeper server paused or down.
type Span struct {
	Target string `json:"target"` // client name, or "zk<index>"
	What   string `json:"what"`   // "paused", "partitioned", "down"
	From   int64  `json:"from"`
	To     int64  `json:"to"`
	Fault  int    `json:"fault"` // FaultRecord.N
}

// faults runs the schedule: explicit, or drawn from the seed until
// Duration has passed.
func (h *harness) faults() {
	var draw func() Fault
	if len(h.o.Faults) == 0 {
		draw = NewPlanner(h.o.Seed, h.o.limits()).Next
	}
	h.schedule(draw, h.episode)
}

// schedule runs faults one after the other through episode, logging how
// each ended: the explicit Faults, or, when draw is not nil, those it
// draws until Duration has passed.
func (h *harness) schedule(draw func() Fault, episode func(n int, f Fault) FaultRecord) {
	end := time.Now().Add(h.o.Duration)
	for n := 1; h.ctx.Err() == nil; n++ {
		var f Fault
		if draw != nil {
			if time.Now().After(end) {
				return
			}
			f = draw()
		} else {
			if n > len(h.o.Faults) {
				return
			}
			f = h.o.Faults[n-1]
		}
		h.sleep(f.Wait)
		rec := episode(n, f)
		h.records = append(h.records, rec)
		if rec.OK {
			h.logf("#%d %s: converged %v after it ended", n, rec.Detail, rec.Converge.Round(time.Millisecond))
		} else {
			h.problem("#%d %s: did not converge within %v: %s", n, rec.Detail, h.o.ConvergeTimeout, rec.Why)
		}
	}
}

// healing is a fault in effect and how to end it.
type healing struct {
	at   time.Time
	heal func()
}

// episode applies one fault (a storm: several), ends it, and waits for the
// group to converge.
func (h *harness) episode(n int, f Fault) FaultRecord {
	rec := FaultRecord{N: n, Fault: f, Start: event.Now()}
	var pending []healing
	var details []string
	// runHeals ends the faults due by until (all of them if until is
	// zero), in time order, then waits for until.
	runHeals := func(until time.Time) {
		for len(pending) > 0 {
			slices.SortStableFunc(pending, func(a, b healing) int { return a.at.Compare(b.at) })
			next := pending[0]
			if !until.IsZero() && next.at.After(until) {
				break
			}
			h.sleep(time.Until(next.at))
			pending = pending[1:]
			rec.Healed = event.Now() // the fault ends as its healing starts
			next.heal()
		}
		if !until.IsZero() {
			h.sleep(time.Until(until))
		}
	}
	subs := []Fault{f}
	if f.Kind == Storm {
		subs = f.Sub
	}
	used := map[string]bool{}
	for i, s := range subs {
		if i > 0 {
			runHeals(time.Now().Add(s.Wait))
		}
		detail, heal := h.apply(n, s, used)
		rec.Healed = event.Now() // for faults that end once applied
		details = append(details, detail)
		if heal != nil {
			pending = append(pending, healing{at: time.Now().Add(s.Dur), heal: heal})
		}
	}
	runHeals(time.Time{})
	rec.Detail = strings.Join(details, "; ")
	if f.Kind == Storm {
		rec.Detail = "storm: " + rec.Detail
	}
	h.mark(event.Note, "harness", fmt.Sprintf("fault #%d over: %s", n, rec.Detail))
	at, ok, why := h.converge(rec.Healed, h.stable(), h.o.ConvergeTimeout)
	rec.OK, rec.Why = ok, why
	if ok {
		rec.Converged, rec.Converge = at, time.Duration(at-rec.Healed)
	}
	return rec
}

// apply starts fault f (number n) and returns a description and how to
// end it (nil when it ends at once). Client faults take a client not in
// used, and add it there.
func (h *harness) apply(n int, f Fault, used map[string]bool) (string, func()) {
	if f.Kind.onClient() {
		c := h.pick(f.Pick, used)
		if c == nil {
			return string(f.Kind) + ": no client to target", nil
		}
		used[c.name] = true
		return h.applyClient(n, f, c)
	}
	switch f.Kind {
	case KillLeader, KillFollower, PauseLeader, PauseFollower:
		return h.applyServer(n, f)
	case AddResource:
		if err := h.addResource(); err != nil {
			h.problem("%v", err)
		}
		return "add " + h.resources[len(h.resources)-1], nil
	case RemoveResource:
		if len(h.resources) <= 1 {
			return "remove-resource: none to remove", nil
		}
		r, err := h.removeResource(f.Pick)
		if err != nil {
			h.problem("%v", err)
		}
		return "remove " + r, nil
	case AddClient:
		c, err := h.newClient()
		if err == nil {
			err = h.startClient(c)
		}
		if err != nil {
			h.problem("add client: %v", err)
			return "add client (failed)", nil
		}
		return "add client " + c.name, nil
	}
	return "unknown fault " + string(f.Kind), nil
}

// pick returns live client number pick (modulo), skipping those in used.
func (h *harness) pick(pick int, used map[string]bool) *client {
	var names []string
	for _, n := range h.live() {
		if !used[n] {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return h.clients[names[pick%len(names)]]
}

func (h *harness) span(n int, target, what string) {
	h.spans = append(h.spans, Span{Target: target, What: what, From: event.Now(), Fault: n})
}

// endSpan closes the last open span of target.
func (h *harness) endSpan(target string) {
	for i := len(h.spans) - 1; i >= 0; i-- {
		if h.spans[i].Target == target && h.spans[i].To == 0 {
			h.spans[i].To = event.Now()
			return
		}
	}
}

func (h *harness) applyClient(n int, f Fault, c *client) (string, func()) {
	dur := f.Dur.Round(time.Millisecond)
	h.record(event.Event{Kind: event.Fault, Client: c.name, Detail: fmt.Sprintf("#%d %s for %v", n, f.Kind, dur)})
	switch f.Kind {
	case KillClient:
		h.kill(c)
		h.span(n, c.name, "down")
		return fmt.Sprintf("kill %s, restart after %v", c.name, dur), func() {
			h.endSpan(c.name)
			if err := h.startClient(c); err != nil {
				h.problem("restart %s: %v", c.name, err)
				h.dropClient(c)
			}
		}
	case PauseShort, PauseMedium, PauseLong:
		resume, err := h.holdPaused(c)
		if err != nil {
			h.problem("pause %s: %v", c.name, err)
			return "pause " + c.name + " (failed)", nil
		}
		h.span(n, c.name, "paused")
		return fmt.Sprintf("pause %s for %v", c.name, dur), func() {
			h.endSpan(c.name)
			resume()
		}
	case PartitionShort, PartitionMedium, PartitionLong:
		if err := c.proxy.Blackhole(); err != nil {
			h.problem("partition %s: %v", c.name, err)
			return "partition " + c.name + " (failed)", nil
		}
		h.span(n, c.name, "partitioned")
		return fmt.Sprintf("partition %s for %v", c.name, dur), func() {
			h.endSpan(c.name)
			if err := c.proxy.Heal(); err != nil {
				h.problem("heal %s: %v", c.name, err)
			}
			h.mark(event.Fault, c.name, "partition healed")
		}
	case RemoveClient:
		if len(h.clients) <= 1 {
			return "remove-client: the last one stays", nil
		}
		if err := h.stopClient(c); err != nil {
			h.problem("%v", err)
		}
		h.dropClient(c)
		return "remove client " + c.name, nil
	}
	return "unknown client fault " + string(f.Kind), nil
}

// kill kills c's process and records its crash once the service has seen
// the last of it.
func (h *harness) kill(c *client) {
	c.expected = true
	if err := c.proc.Kill(); err != nil {
		h.problem("kill %s: %v", c.name, err)
	}
	h.gone(c, event.Crash, "killed")
}

// stopClient asks c to leave and waits until it has; a client that does not
// leave in time is killed. It is safe to call for several clients at once.
func (h *harness) stopClient(c *client) error {
	c.expected = true
	var err error
	if serr := c.proc.Send("stop"); serr != nil {
		err = fmt.Errorf("chaos: tell %s to stop: %w", c.name, serr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if werr := c.proc.Wait(ctx); werr != nil {
		if err == nil {
			err = fmt.Errorf("chaos: %s did not leave cleanly: %v\n%s", c.name, werr, tail(c.proc.Stderr(), 2000))
		}
		c.proc.Kill()
		h.gone(c, event.Crash, "killed after a failed stop")
		return err
	}
	h.gone(c, event.Exit, "left")
	return err
}

func (h *harness) dropClient(c *client) {
	h.mu.Lock()
	delete(h.clients, c.name)
	h.mu.Unlock()
	c.proxy.Close()
}

// applyServer kills or pauses the ZooKeeper leader or a follower.
func (h *harness) applyServer(n int, f Fault) (string, func()) {
	ctx, cancel := context.WithTimeout(h.ctx, 2*time.Minute)
	defer cancel()
	if err := h.zk.WaitReady(ctx); err != nil {
		h.problem("ZooKeeper not ready before fault #%d: %v", n, err)
		return string(f.Kind) + " (skipped: ensemble not ready)", nil
	}
	leader, err := h.zk.Leader()
	for tries := 0; err != nil && tries < 20 && h.ctx.Err() == nil; tries++ {
		h.sleep(500 * time.Millisecond) // a srvr answer lost on a loaded machine
		leader, err = h.zk.Leader()
	}
	if err != nil {
		h.problem("no ZooKeeper leader before fault #%d: %v", n, err)
		return string(f.Kind) + " (skipped: no leader)", nil
	}
	target := leader
	if f.Kind == KillFollower || f.Kind == PauseFollower {
		var followers []int
		for i := range h.zk.Len() {
			if i != leader {
				followers = append(followers, i)
			}
		}
		target = followers[n%len(followers)]
	}
	s := h.zk.Server(target)
	name := fmt.Sprintf("zk%d", target)
	role := "follower"
	if target == leader {
		role = "leader"
	}
	dur := f.Dur.Round(time.Millisecond)
	h.mark(event.Fault, name, fmt.Sprintf("#%d %s (%s) for %v", n, f.Kind, role, dur))
	// undo ends the fault with do (restart, resume) and waits until the
	// ensemble serves again.
	undo := func(what string, do func() error) func() {
		return func() {
			if err := do(); err != nil {
				h.problem("%s %s: %v", what, name, err)
			}
			h.endSpan(name)
			ctx, cancel := context.WithTimeout(h.ctx, 2*time.Minute)
			defer cancel()
			if err := h.zk.WaitReady(ctx); err != nil {
				h.problem("ZooKeeper not ready after fault #%d: %v", n, err)
			}
		}
	}
	switch f.Kind {
	case KillLeader, KillFollower:
		if err := s.Kill(); err != nil {
			h.problem("kill %s: %v", name, err)
		}
		h.span(n, name, "down")
		return fmt.Sprintf("kill %s (%s), restart after %v", name, role, dur), undo("restart", s.Start)
	default:
		if err := s.Pause(); err != nil {
			h.problem("pause %s: %v", name, err)
			return "pause " + name + " (failed)", nil
		}
		h.span(n, name, "paused")
		return fmt.Sprintf("pause %s (%s) for %v", name, role, dur), undo("resume", s.Resume)
	}
}
