package zkconn

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// A request's life: queued until a connection's writer claims it (written)
// or its caller gives up first (cancelled, never written); once written,
// answered by its reply or by the connection's loss, unless its caller
// gave up first (abandoned: the reply is read and dropped, and registers
// no watch). Each change is one compare-and-swap, so a request is written
// only if its caller has not been told it was not.
const (
	stateQueued int32 = iota
	stateCancelled
	stateWritten
	stateAbandoned
	stateAnswered
)

// Reply is what every answered call returns beside its record.
type Reply struct {
	// Zxid is the ReplyHeader's zxid: the last zxid the server had
	// applied when it answered.
	Zxid int64
	// Sent is the monotonic time the request's frame began to be written.
	// The reply proves the session was alive on the server at a moment
	// after Sent, so Sent plus the negotiated timeout is a lower bound on
	// the session's expiry.
	Sent time.Time
}

type result struct {
	reply   Reply
	err     error
	watched bool // the request's watch was registered
}

// request is one call on its way to the server and back.
type request struct {
	op   wire.OpCode
	xid  int32
	body wire.Encodable // nil for a header-only request
	resp wire.Decodable // nil when the reply has no record

	// watch is registered when the reply says the server set it.
	watch *Watch
	// removes is the path and type of a removeWatches request.
	removes *wire.RemoveWatchesRequest

	internal bool // the client's own (setWatches): no caller waits
	state    atomic.Int32
	sent     time.Time // set by the writer before the state is published
	done     chan result
}

func newRequest(op wire.OpCode, body wire.Encodable, resp wire.Decodable) *request {
	return &request{op: op, body: body, resp: resp, done: make(chan result, 1)}
}

// finish answers a written request, unless its caller abandoned it. It
// reports whether the caller will see the answer.
func (r *request) finish(res result) bool {
	if !r.state.CompareAndSwap(stateWritten, stateAnswered) {
		return false
	}
	r.done <- res
	return true
}

// fail answers a request never written, unless its caller gave up first.
func (r *request) failUnsent(err error) {
	if r.state.CompareAndSwap(stateQueued, stateCancelled) {
		r.done <- result{err: notSent(err)}
	}
}

// do queues r and waits for its answer, ctx's end or the client's.
func (c *Client) do(ctx context.Context, r *request) (Reply, error) {
	res := c.call(ctx, r)
	return res.reply, res.err
}

// call is do returning the whole result.
func (c *Client) call(ctx context.Context, r *request) result {
	if res, ok := c.enqueue(ctx, r); !ok {
		return res
	}
	return c.wait(ctx, r)
}

// enqueue puts r in the client's queue, whose order is the order of the
// writes; it waits for room, bounded by ctx.
func (c *Client) enqueue(ctx context.Context, r *request) (result, bool) {
	if err := ctx.Err(); err != nil {
		return result{err: notSent(err)}, false
	}
	if c.closing.Load() && r.op != wire.OpCloseSession {
		return result{err: notSent(ErrClosed)}, false
	}
	select {
	case c.queue <- r:
		return result{}, true
	case <-ctx.Done():
		return result{err: notSent(ctx.Err())}, false
	case <-c.done:
		return result{err: notSent(c.err)}, false
	}
}

// wait waits for the answer to a queued request.
func (c *Client) wait(ctx context.Context, r *request) result {
	select {
	case res := <-r.done:
		return res
	case <-ctx.Done():
		return c.giveUp(r, ctx.Err())
	case <-c.done:
		// The end answers every request it finds; one queued after it
		// is still queued.
		return c.giveUp(r, c.err)
	}
}

// giveUp ends the caller's wait for r because of why.
func (c *Client) giveUp(r *request, why error) result {
	if r.state.CompareAndSwap(stateQueued, stateCancelled) {
		return result{err: notSent(why)}
	}
	if r.state.CompareAndSwap(stateWritten, stateAbandoned) {
		return result{err: fmt.Errorf("%w: %v: %w", ErrOutcomeUnknown, r.op, why)}
	}
	return <-r.done // answered already
}

// Call is a request issued with Start and not yet waited for.
type Call struct {
	c   *Client
	ctx context.Context
	r   *request
	res result
	ok  bool // queued
}

// Start issues a request (as Do) without waiting for its reply: when it
// returns, the request has its place in the order of writes, after every
// request issued before it returned and before every one issued after.
// So a goroutine that starts several requests in turn pipelines them, in
// that order, in one round trip. ctx bounds the wait for room in the
// queue and, with Wait, for the reply.
func (c *Client) Start(ctx context.Context, op wire.OpCode, body wire.Encodable, resp wire.Decodable) *Call {
	r := newRequest(op, body, resp)
	call := &Call{c: c, ctx: ctx, r: r}
	if err := ownOp(op); err != nil {
		call.res = result{err: notSent(err)}
		return call
	}
	call.res, call.ok = c.enqueue(ctx, r)
	return call
}

// Wait returns the reply of a started request; the outcomes are those of
// Do. It may be called once.
func (call *Call) Wait() (Reply, error) {
	if call.ok {
		call.res, call.ok = call.c.wait(call.ctx, call.r), false
	}
	return call.res.reply, call.res.err
}
