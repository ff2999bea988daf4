package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/delay"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/queue"
)

// Events of the queue workload. A consumer records, for every item it
// takes (the item's number is its Resource):
//
//	Acquire                      the item claimed (Token: the claim's czxid)
//	Note "processed"             processing finished (every use was made)
//	Note "ack"                   about to acknowledge it
//	Note "acked"                 the acknowledgement succeeded
//	Note "ack failed"            it failed; it may still have gone through
//	Release                      done with it (Detail: acked, lost, ...)
//
// The producer (the harness) records Note "put" for an item it added, or
// "put?" when the outcome of the Put is unknown, and Note "ack went
// through" for an item whose acknowledgement failed or was cut short by a
// crash but whose entry is gone from the queue. Processing is a sequence
// of uses of the item through the fenced service, with the claim's czxid
// as the token, so a consumer that lost its claim to another is refused.
const (
	noteProcessed  = "processed"
	noteAck        = "ack"
	noteAcked      = "acked"
	noteAckFailed  = "ack failed"
	noteAckThrough = "ack went through"
	notePut        = "put"
	notePutUnknown = "put?"
)

// processRange bounds how long a consumer processes one item.
var processRange = [2]time.Duration{100 * time.Millisecond, 700 * time.Millisecond}

// queuePath is where the run's work queue lives.
func queuePath(root string) string { return zkcoord.Join(root, "queue") }

// itemName names item number n; it is also the item's data.
func itemName(n int) string { return fmt.Sprintf("q%06d", n) }

// queueApp is a consumer of the queue workload: it takes items one at a
// time, processes each and acknowledges it, on Sessions that a sessions
// manager renews after each loss.
type queueApp struct {
	f   clientFlags
	em  *event.Emitter
	svc *serviceConn
	looper
}

func startQueue(ctx context.Context, f clientFlags, cfg zkcoord.Config, em *event.Emitter, svc *serviceConn) (*queueApp, error) {
	if f.bug == BugClaimCallerCtx {
		if !claimBugBuilt {
			return nil, fmt.Errorf("%w: bug %s needs a binary built with -tags zkcoord_broken_claim", ErrInvalidOptions, BugClaimCallerCtx)
		}
		// The queue package's switch for this bug (queue/broken_on.go).
		if err := os.Setenv("ZKCOORD_TEST_BROKEN", BugClaimCallerCtx); err != nil {
			return nil, err
		}
	}
	a := &queueApp{f: f, em: em, svc: svc}
	if err := a.start(ctx, cfg, em, f.log, a.loop); err != nil {
		return nil, err
	}
	return a, nil
}

// Takes: a batch of 1 to maxBatch items; one take in hurryOneIn has a
// deadline of at most hurryMax, which often expires while the claim is in
// flight (a claim is one transaction: about a millisecond without faults).
const (
	maxBatch   = 4
	hurryOneIn = 2
	hurryMax   = 15 * time.Millisecond
)

// loop takes items, in batches, until ctx ends.
func (a *queueApp) loop(ctx context.Context) {
	rng := rand.New(rand.NewPCG(seedFor(a.f.seed, a.f.name, "queue"), uint64(time.Now().UnixNano())))
	for ctx.Err() == nil {
		sess, err := a.sm.get(ctx)
		if err != nil {
			return
		}
		q, err := queue.NewWork(sess, queuePath(a.f.root))
		if err != nil {
			fatal(a.f.log, "queue", err)
		}
		tctx, cancel := ctx, context.CancelFunc(func() {})
		hurried := rng.IntN(hurryOneIn) == 0
		if hurried {
			tctx, cancel = context.WithTimeout(ctx, time.Duration(rng.Int64N(int64(hurryMax))))
		}
		cs, err := q.TakeN(tctx, 1+rng.IntN(maxBatch))
		cancel()
		if err != nil {
			if ctx.Err() == nil && sess.Err() == nil && !hurried {
				a.f.log.Warn("take failed", "err", err)
			}
			if !hurried {
				delay.Sleep(ctx, 100*time.Millisecond+time.Duration(rng.Int64N(int64(200*time.Millisecond))), nil)
			}
			continue
		}
		// Processed one after the other: a consumer killed mid-batch
		// holds the rest of its batch until its session expires.
		for _, c := range cs {
			d := processRange[0] + time.Duration(rng.Int64N(int64(processRange[1]-processRange[0])))
			a.process(ctx, sess, q, c, d)
		}
	}
}

// process works on one claimed item for d, then acknowledges it (in the
// other order with the ack-first bug).
func (a *queueApp) process(ctx context.Context, sess *zkcoord.Session, q *queue.WorkQueue, c *queue.Claim, d time.Duration) {
	item := string(c.Data())
	// The claim node's czxid fences the processing: a later claim of the
	// same item has a higher one.
	ok, st, err := sess.Exists(ctx, zkcoord.Join(q.Path(), "taken", c.Name()))
	if err != nil || !ok {
		a.f.log.Warn("claim node unreadable", "item", item, "err", err)
		a.giveBack(c)
		return
	}
	token := st.Czxid
	a.em.Emit(event.Event{Kind: event.Acquire, Resource: item, Token: token, Detail: c.Name()})
	release := func(why string) {
		a.em.Emit(event.Event{Kind: event.Release, Resource: item, Token: token, Detail: why})
	}
	if a.f.bug == BugAckFirst {
		if !a.ack(c, item) {
			release("ack failed")
			return
		}
		w := startWorker(context.Background(), a.svc, a.f.log, item, token, a.f.useInterval, false)
		delay.Sleep(ctx, d, nil)
		w.stop()
		a.em.Emit(event.Event{Kind: event.Note, Resource: item, Detail: noteProcessed})
		release("acked")
		return
	}
	wctx, cancel := whileHeld(c.Done())
	defer cancel()
	stopWatch := context.AfterFunc(ctx, cancel)
	defer stopWatch()
	w := startWorker(wctx, a.svc, a.f.log, item, token, a.f.useInterval, false)
	delay.Sleep(wctx, d, nil)
	w.stop()
	if c.Err() != nil || ctx.Err() != nil {
		why := "stopping"
		if err := c.Err(); err != nil {
			why = fmt.Sprint("lost: ", err)
		}
		release(why)
		a.giveBack(c)
		return
	}
	a.em.Emit(event.Event{Kind: event.Note, Resource: item, Detail: noteProcessed})
	if a.ack(c, item) {
		release("acked")
		return
	}
	release("ack failed")
	a.giveBack(c)
}

// ack acknowledges c, recording the attempt and its success.
func (a *queueApp) ack(c *queue.Claim, item string) bool {
	a.em.Emit(event.Event{Kind: event.Note, Resource: item, Detail: noteAck})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Ack(ctx); err != nil {
		// A Session lost while the transaction was in flight leaves its
		// outcome unknown: the harness looks at the queue.
		a.f.log.Warn("ack failed", "item", item, "err", err)
		a.em.Emit(event.Event{Kind: event.Note, Resource: item, Detail: noteAckFailed})
		return false
	}
	a.em.Emit(event.Event{Kind: event.Note, Resource: item, Detail: noteAcked})
	return true
}

// giveBack releases a claim that is still held, so that another consumer
// takes the item at once.
func (a *queueApp) giveBack(c *queue.Claim) {
	if c.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Release(ctx); err != nil && c.Err() == nil {
		a.f.log.Warn("release failed", "item", c.Name(), "err", err)
	}
}
