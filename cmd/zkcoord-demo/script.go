package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/internal/groupwatch"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
	"github.com/zkcoord/zkcoord/rebalance"
)

// stepTimeout bounds every wait of the script. Normally each step takes a
// few seconds; the bound is generous for loaded machines.
const stepTimeout = 45 * time.Second

// script plays the steps in order; it stops at the first that fails.
func (d *demo) script() error {
	ctx := d.a.Ctx
	st := d.o.sessionTimeout
	steps := []struct {
		title, explain string
		do             func(ctx context.Context, r *stepRecord) error
	}{
		{fmt.Sprintf("start %d workers sharing %d resources", d.o.workers, d.o.resources),
			"The workers elect a coordinator, which writes an even allocation into ZooKeeper.",
			d.stepStart},
		{"add a worker",
			"Only the resources that must move to the new worker stop; the others keep running.",
			d.stepAddWorker},
		{"SIGKILL the coordinator",
			fmt.Sprintf("Its processes die with it, but its resources stay locked until ZooKeeper expires its session (%v); then a new coordinator takes over.", st),
			d.stepKillCoordinator},
		{"add 2 resources, remove 1",
			"The coordinator notices and gives the new resources out; the removed one is stopped by its owner.",
			d.stepResources},
		{"cut a worker off the network",
			fmt.Sprintf("It cannot hear from ZooKeeper, so it stops its processes on its own before its session can expire (%v); only then may the others take its resources. Then the network heals and it joins again.", st),
			d.stepPartition},
		{"stop every worker (SIGTERM)",
			"Each worker stops its processes, releases its resources and leaves the group.",
			d.stepStopAll},
	}
	d.mu.Lock()
	d.total = len(steps)
	d.mu.Unlock()
	for i, s := range steps {
		r := &stepRecord{n: i + 1, title: s.title, explain: s.explain, start: time.Now()}
		d.mu.Lock()
		d.steps = append(d.steps, r)
		d.mu.Unlock()
		d.logf("step %d/%d: %s. %s", r.n, len(steps), r.title, r.explain)
		err := s.do(ctx, r)
		d.mu.Lock()
		r.end, r.err = time.Now(), err
		d.mu.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return errors.New("interrupted")
			}
			d.problem("step %d (%s) failed: %v", r.n, r.title, err)
			d.groupNow(ctx)
			d.workerTails()
			return nil
		}
		d.logf("step %d done in %s", r.n, fmtDur(r.end.Sub(r.start)))
		d.notify()
		if i < len(steps)-1 && d.o.pace > 0 && !delay.Sleep(ctx, d.o.pace, nil) {
			return errors.New("interrupted")
		}
	}
	return nil
}

// note adds a remark to a step, shown in the view and the log.
func (d *demo) note(r *stepRecord, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	d.mu.Lock()
	r.notes = append(r.notes, msg)
	d.mu.Unlock()
	d.logf("  %s", msg)
}

func (d *demo) stepStart(ctx context.Context, r *stepRecord) error {
	for _, res := range d.resources {
		if err := rebalance.AddResource(ctx, d.sess, zkcoord.Join(d.root, d.group), res); err != nil {
			return fmt.Errorf("registering %s: %w", res, err)
		}
	}
	d.notify()
	for i := 1; i <= d.o.workers; i++ {
		if _, err := d.startWorker(fmt.Sprintf("worker-%d", i)); err != nil {
			return err
		}
	}
	return d.converge(ctx)
}

func (d *demo) stepAddWorker(ctx context.Context, r *stepRecord) error {
	if _, err := d.startWorker(fmt.Sprintf("worker-%d", d.o.workers+1)); err != nil {
		return err
	}
	return d.converge(ctx)
}

// aim names w, the worker a step acts on, in the step's title; without
// such a worker the step fails, saying none.
func (d *demo) aim(r *stepRecord, w *demoWorker, none string) error {
	if w == nil {
		return errors.New(none)
	}
	d.mu.Lock()
	r.title += " (" + w.name + ")"
	d.mu.Unlock()
	return nil
}

// waitExpired waits until ZooKeeper has expired w's session.
func (d *demo) waitExpired(ctx context.Context, w *demoWorker) error {
	return d.waitFor(ctx, func() (bool, string) {
		return !d.isMember(w.name), "waiting for ZooKeeper to expire " + w.name + "'s session"
	})
}

func (d *demo) stepKillCoordinator(ctx context.Context, r *stepRecord) error {
	w := d.coordinator()
	if err := d.aim(r, w, "no coordinator among the workers"); err != nil {
		return err
	}
	killed := time.Now()
	d.setState(w, "killed")
	if err := w.proc.Kill(); err != nil {
		return fmt.Errorf("killing %s: %w", w.name, err)
	}
	// Every process of the worker is gone now: its holdings end here.
	d.hist.Add(event.Event{Client: w.name, Kind: event.Crash})
	d.hist.Mark(event.Fault, w.name, "SIGKILL")
	d.notify()
	if err := d.waitExpired(ctx, w); err != nil {
		return err
	}
	d.note(r, "ZooKeeper expired %s's session %s after the kill", w.name, fmtDur(time.Since(killed)))
	if err := d.converge(ctx); err != nil {
		return err
	}
	took := time.Since(killed)
	d.note(r, "all resources run again %s after the kill; new coordinator: %s", fmtDur(took), d.coordinatorName())
	d.mu.Lock()
	r.summary = fmt.Sprintf("SIGKILL of the coordinator: its resources ran elsewhere %s later (session timeout %v)", fmtDur(took), d.o.sessionTimeout)
	d.mu.Unlock()
	return nil
}

func (d *demo) stepResources(ctx context.Context, r *stepRecord) error {
	n := len(d.resources)
	added := []string{fmt.Sprintf("shard-%02d", n+1), fmt.Sprintf("shard-%02d", n+2)}
	removed := d.resources[1]
	for _, res := range added {
		if err := rebalance.AddResource(ctx, d.sess, zkcoord.Join(d.root, d.group), res); err != nil {
			return fmt.Errorf("adding %s: %w", res, err)
		}
	}
	if err := rebalance.RemoveResource(ctx, d.sess, zkcoord.Join(d.root, d.group), removed); err != nil {
		return fmt.Errorf("removing %s: %w", removed, err)
	}
	d.mu.Lock()
	d.resources = append(slices.DeleteFunc(d.resources, func(s string) bool { return s == removed }), added...)
	d.mu.Unlock()
	d.note(r, "added %s, removed %s", strings.Join(added, " "), removed)
	return d.converge(ctx)
}

func (d *demo) stepPartition(ctx context.Context, r *stepRecord) error {
	w := d.follower()
	if err := d.aim(r, w, "no worker to cut off"); err != nil {
		return err
	}
	held := len(d.hist.Holdings()[w.name])
	cut := time.Now()
	if err := w.proxy.Blackhole(); err != nil {
		return fmt.Errorf("cutting %s off: %w", w.name, err)
	}
	d.setState(w, "partitioned")
	d.hist.Mark(event.Fault, w.name, "partitioned")
	if err := d.waitFor(ctx, func() (bool, string) {
		return len(d.hist.Holdings()[w.name]) == 0, "waiting for " + w.name + " to stop its processes"
	}); err != nil {
		return err
	}
	stopped := time.Since(cut)
	d.note(r, "%s stopped its %d processes by itself %s after the cut", w.name, held, fmtDur(stopped))
	if err := d.waitExpired(ctx, w); err != nil {
		return err
	}
	expired := time.Since(cut)
	d.note(r, "ZooKeeper expired its session %s after the cut", fmtDur(expired))
	if err := d.converge(ctx); err != nil {
		return err
	}
	over := time.Since(cut)
	d.note(r, "the others took its resources over, %s after the cut", fmtDur(over))
	d.mu.Lock()
	r.summary = fmt.Sprintf("cut-off worker: stopped its processes %s after the cut, expired %s, replaced %s", fmtDur(stopped), fmtDur(expired), fmtDur(over))
	d.mu.Unlock()
	if err := w.proxy.Heal(); err != nil {
		return fmt.Errorf("healing %s: %w", w.name, err)
	}
	healed := time.Now()
	d.setState(w, "running")
	d.hist.Mark(event.Quiet, w.name, "healed")
	if err := d.converge(ctx); err != nil {
		return err
	}
	d.note(r, "network healed: %s joined again and got its share back %s later", w.name, fmtDur(time.Since(healed)))
	return nil
}

func (d *demo) stepStopAll(ctx context.Context, r *stepRecord) error {
	d.mu.Lock()
	var live []*demoWorker
	for _, w := range d.workers {
		if w.state == "running" {
			live = append(live, w)
		}
	}
	d.mu.Unlock()
	errs := make(chan error, len(live))
	for _, w := range live {
		go func() {
			d.setState(w, "stopping")
			err := w.proc.Terminate(20 * time.Second)
			d.setState(w, "stopped")
			if err == nil {
				err = w.proc.ExitErr()
			}
			if err != nil {
				err = fmt.Errorf("%s: %w: %s", w.name, err, lastLines(w.proc.Stderr(), 5))
			}
			errs <- err
		}()
	}
	var all []error
	for range live {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		return err
	}
	if h := d.hist.Holdings(); len(h) > 0 {
		return fmt.Errorf("resources still held after every worker stopped: %v", h)
	}
	d.note(r, "every worker released its resources and exited with status 0")
	return nil
}

// converge waits until the group is settled with the live workers as its
// members and the workers' own reports show every resource run by exactly
// one of them, evenly.
func (d *demo) converge(ctx context.Context) error {
	return d.waitFor(ctx, func() (bool, string) {
		d.mu.Lock()
		last := d.last
		var names []string
		for _, w := range d.workers {
			if w.state == "running" {
				names = append(names, w.name)
			}
		}
		resources := slices.Clone(d.resources)
		d.mu.Unlock()
		if last == nil {
			return false, "waiting for the group"
		}
		var members []string
		for _, m := range last.Members {
			members = append(members, groupwatch.MemberName(last, m.ID))
		}
		slices.Sort(members)
		slices.Sort(names)
		if !slices.Equal(members, names) {
			return false, fmt.Sprintf("members are %v, want %v", members, names)
		}
		if last.Rebalancing || len(last.Unallocated) > 0 {
			return false, "rebalancing: " + unsettled(last)
		}
		if err := oracle.CheckBalanced(d.hist.Holdings(), names, resources); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// waitFor waits until cond holds, re-checking it after every change of the
// group and every event of a worker, and at least every 100ms.
func (d *demo) waitFor(ctx context.Context, cond func() (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return nil
		}
		if len(d.failures()) > 0 {
			return errors.New("stopping: see the problems above")
		}
		select {
		case <-d.changed:
		case <-tick.C:
		case <-ctx.Done():
			if d.a.Ctx.Err() != nil {
				return d.a.Ctx.Err()
			}
			return fmt.Errorf("not done after %v: %s", stepTimeout, why)
		}
	}
}

func (d *demo) failures() []string { return d.problems.List() }

// coordinator returns the worker that coordinates the group.
func (d *demo) coordinator() *demoWorker {
	name := d.coordinatorName()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, w := range d.workers {
		if w.name == name && w.state == "running" {
			return w
		}
	}
	return nil
}

func (d *demo) coordinatorName() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil || d.last.Coordinator == "" {
		return ""
	}
	return groupwatch.MemberName(d.last, d.last.Coordinator)
}

// follower returns a running worker that is not the coordinator and holds
// resources.
func (d *demo) follower() *demoWorker {
	coord := d.coordinatorName()
	holdings := d.hist.Holdings()
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(d.workers) - 1; i >= 0; i-- {
		w := d.workers[i]
		if w.state == "running" && w.name != coord && len(holdings[w.name]) > 0 {
			return w
		}
	}
	return nil
}

func (d *demo) isMember(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		return false
	}
	for _, m := range d.last.Members {
		if groupwatch.MemberName(d.last, m.ID) == name {
			return true
		}
	}
	return false
}

// unsettled says what keeps a group from being settled: the moves under
// way, the resources nobody is given, or the phase of a global barrier.
func unsettled(d *rebalance.Description) string {
	var why []string
	for _, m := range d.Pending {
		from := groupwatch.MemberName(d, m.From)
		if m.From == "" {
			from = "nobody"
		}
		why = append(why, fmt.Sprintf("%s from %s to %s", m.Resource, from, groupwatch.MemberName(d, m.To)))
	}
	if len(d.Unallocated) > 0 {
		why = append(why, "not allocated: "+strings.Join(d.Unallocated, " "))
	}
	if d.Status != nil && d.Status.Phase != rebalance.PhaseStartConfirmed {
		why = append(why, "global barrier in phase "+d.Status.Phase)
	}
	if len(why) == 0 {
		why = append(why, fmt.Sprintf("the allocation of generation %d does not match the members", d.Generation))
	}
	return strings.Join(why, "; ")
}

// groupNow logs the group as a fresh read finds it, beside the last
// description the watch delivered, so that a step that did not complete
// shows whether the group or the watch of it was stuck.
func (d *demo) groupNow(ctx context.Context) {
	d.mu.Lock()
	last := d.last
	d.mu.Unlock()
	now, err := rebalance.Describe(ctx, d.sess, zkcoord.Join(d.root, d.group))
	if err != nil {
		d.logf("  reading the group again: %v", err)
		return
	}
	for _, s := range []struct {
		what string
		d    *rebalance.Description
	}{{"last seen by the watch", last}, {"read now", now}} {
		if s.d == nil {
			continue
		}
		state := "settled"
		if s.d.Rebalancing || len(s.d.Unallocated) > 0 {
			state = "rebalancing: " + unsettled(s.d)
		}
		d.logf("  group %s: term %d, generation %d, %s", s.what, s.d.Term, s.d.Generation, state)
		for _, m := range s.d.Members {
			d.logf("    %-10s allocated %s, holding %s", groupwatch.MemberName(s.d, m.ID), cli.Words(m.Allocated), cli.Words(m.Holding))
		}
	}
}
