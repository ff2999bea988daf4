package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/config"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// The counter workload: many writers of one shared counter and of
// configuration nodes, whose replies the faults cut off. Time is divided
// into rounds of roundEvery, on the clock every process of the machine
// shares; client cN starts round k at k×roundEvery plus (N mod 3)/3 of a
// round, and in it, once:
//
//   - creates the configuration node slots/<k> holding "round k" (the same
//     bytes for every client: one create wins, the others find it there);
//   - adds 1 to the counter;
//   - appends "<client>-<k>" to the JSON list in the configuration node
//     list, with JSON.Update.
//
// A client partitioned at a round's start has its create cut off; a
// client a third of a round later creates the node meanwhile, with the
// same bytes, and nobody touches it again: just what a settle that
// compares values takes for its own write. Every write is recorded before
// it is sent and after (Resource: the node; Token: the round; Detail: the
// operation and its outcome: ok, no, or ? when the library reports its
// outcome unknown). A client records Note "round" when it has done a round.
const roundEvery = 250 * time.Millisecond

// Operations and outcomes of the counter workload's events.
const (
	opCreate = "create"
	opAdd    = "add"
	opUpdate = "update"

	outBegin   = ""
	outOK      = " ok"
	outNo      = " no"     // surely not done
	outExists  = " exists" // create: the node was there
	outUnknown = " ?"

	noteRound = "round"
)

// Paths of the counter workload, under the run's root.
func counterPath(root string) string { return zkcoord.Join(root, "count") }
func slotsPath(root string) string   { return zkcoord.Join(root, "slots") }
func listPath(root string) string    { return zkcoord.Join(root, "list") }
func slotPath(root string, k int64) string {
	return zkcoord.Join(slotsPath(root), strconv.FormatInt(k, 10))
}
func slotData(k int64) []byte { return []byte(fmt.Sprintf("round %d", k)) }
func listID(client string, k int64) string {
	return client + "-" + strconv.FormatInt(k, 10)
}

// counterApp is a writer of the counter workload, on Sessions that a
// sessions manager renews after each loss.
type counterApp struct {
	f      clientFlags
	em     *event.Emitter
	offset time.Duration
	looper
}

func startCounter(ctx context.Context, f clientFlags, cfg zkcoord.Config, em *event.Emitter) (*counterApp, error) {
	n, _ := strconv.Atoi(strings.TrimPrefix(f.name, "c"))
	a := &counterApp{f: f, em: em, offset: time.Duration(n%3) * roundEvery / 3}
	if err := a.start(ctx, cfg, em, f.log, a.loop); err != nil {
		return nil, err
	}
	return a, nil
}

// loop does one round at the start of each of its rounds (skipping those
// it is too late for) until ctx ends.
func (a *counterApp) loop(ctx context.Context) {
	last := int64(-1)
	for ctx.Err() == nil {
		now := time.Duration(event.Now()) - a.offset
		k := int64(now / roundEvery)
		if k <= last {
			k = last + 1
		}
		if !delay.Sleep(ctx, time.Duration(k)*roundEvery-now, nil) {
			return
		}
		sess, err := a.sm.get(ctx)
		if err != nil {
			return
		}
		last = k
		a.round(ctx, sess, k)
		if ctx.Err() == nil {
			a.em.Emit(event.Event{Kind: event.Note, Token: k, Detail: noteRound})
		}
	}
}

// round makes the round's three writes.
func (a *counterApp) round(ctx context.Context, sess *zkcoord.Session, k int64) {
	a.write(ctx, slotPath(a.f.root, k), k, opCreate, func() (string, error) { return a.create(ctx, sess, k) })
	a.write(ctx, counterPath(a.f.root), k, opAdd, func() (string, error) { return a.addOne(ctx, sess) })
	a.write(ctx, listPath(a.f.root), k, opUpdate, func() (string, error) { return a.appendID(ctx, sess, k) })
}

// write records op on resource before and after running it.
func (a *counterApp) write(ctx context.Context, resource string, k int64, op string, do func() (string, error)) {
	if ctx.Err() != nil {
		return
	}
	a.em.Emit(event.Event{Kind: event.Note, Resource: resource, Token: k, Detail: op + outBegin})
	out, err := do()
	if err != nil && ctx.Err() == nil {
		a.f.log.Warn("write failed", "op", op, "resource", resource, "outcome", out, "err", err)
	}
	a.em.Emit(event.Event{Kind: event.Note, Resource: resource, Token: k, Detail: op + out})
}

// outcome classifies a write's error: done, surely not done, or unknown.
func outcome(err error) string {
	switch {
	case err == nil:
		return outOK
	case errors.Is(err, zkcoord.ErrOutcomeUnknown):
		return outUnknown
	}
	return outNo
}

// create creates the round's configuration node.
func (a *counterApp) create(ctx context.Context, sess *zkcoord.Session, k int64) (string, error) {
	n, err := config.New(sess, slotPath(a.f.root, k))
	if err != nil {
		fatal(a.f.log, "config", err)
	}
	_, err = n.Create(ctx, slotData(k))
	if errors.Is(err, config.ErrExists) {
		return outExists, nil
	}
	if a.f.bug == BugValueSettle && errors.Is(err, zkcoord.ErrOutcomeUnknown) {
		// The old settle: a node at version 0 holding our bytes is ours.
		if v, gerr := n.Get(ctx); gerr == nil && v.Version == 0 && string(v.Data) == string(slotData(k)) {
			return outOK, nil
		}
	}
	return outcome(err), err
}

// addOne adds 1 to the counter.
func (a *counterApp) addOne(ctx context.Context, sess *zkcoord.Session) (string, error) {
	c, err := counter.New(sess, counterPath(a.f.root))
	if err != nil {
		fatal(a.f.log, "counter", err)
	}
	if a.f.bug != BugValueSettle {
		_, err = c.Add(ctx, 1)
		return outcome(err), err
	}
	// The old settle: the next version holding the count this write would
	// have made is taken as this write.
	cur, err := c.Get(ctx)
	for err == nil {
		var ok bool
		var next counter.Count
		next, ok, err = c.TrySetCount(ctx, cur, cur.Value+1)
		if errors.Is(err, zkcoord.ErrOutcomeUnknown) {
			got, gerr := c.Get(ctx)
			if gerr == nil && got.Version == cur.Version+1 && got.Value == cur.Value+1 {
				return outOK, nil
			}
		}
		if err != nil || ok {
			break
		}
		cur = next
	}
	return outcome(err), err
}

// appendID appends this round's id to the list.
func (a *counterApp) appendID(ctx context.Context, sess *zkcoord.Session, k int64) (string, error) {
	j, err := config.NewJSON[[]string](sess, listPath(a.f.root))
	if err != nil {
		fatal(a.f.log, "config", err)
	}
	id := listID(a.f.name, k)
	update := func(cur config.Value[[]string]) ([]string, error) {
		return append(slices.Clone(cur.Value), id), nil
	}
	_, err = j.Update(ctx, update)
	for a.f.bug == BugValueSettle && errors.Is(err, zkcoord.ErrOutcomeUnknown) && ctx.Err() == nil && sess.Err() == nil {
		// The old settle called a write that had moved on by more than
		// one version a conflict, and Update went round again.
		_, err = j.Update(ctx, update)
	}
	return outcome(err), err
}
