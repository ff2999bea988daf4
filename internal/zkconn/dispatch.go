package zkconn

import (
	"github.com/zkcoord/zkcoord/internal/wire"
)

// item is one entry of the dispatcher's stream, in the order the reader
// read it: a reply (req set), a watch event, or a change of the
// connection (a loss, a new connection, the end) with the requests it
// answers.
type item struct {
	req  *request
	hdr  wire.ReplyHeader
	body []byte

	event Event

	tooLarge error // the reply was refused as too large

	forget *Watch // Forget's

	// A change of the connection: state is sent to every watch (the
	// session's only, for a new session), failed requests are answered
	// with err; ack is closed once done.
	change   bool
	state    wire.State
	rearmed  bool
	unsent   []*request
	inflight []*request
	err      error
	end      bool
	ack      chan struct{}
}

// dispatch delivers the stream, in order, until the client's end: replies
// to their callers (registering the watches their replies set), events to
// their watches. Nothing it does blocks: callers' channels hold their one
// answer, watches queue without bound. So the reader never waits for a
// consumer, and an event read before a reply is queued on its watch
// before that reply's caller can see it.
func (c *Client) dispatch() {
	defer c.wg.Done()
	for {
		<-c.events.Ready()
		for _, it := range c.events.PopAll() {
			end := c.handle(it)
			c.undelivered.Add(-1)
			if end {
				return
			}
		}
	}
}

// handle delivers one item; it reports true for the client's last.
func (c *Client) handle(it item) bool {
	switch {
	case it.req != nil:
		c.answer(it)
	case it.forget != nil:
		c.forgot(it.forget)
	case it.change:
		c.changed(it)
		return it.end
	default:
		for _, w := range c.watches.materialize(it.event) {
			w.deliver(it.event)
		}
	}
	return false
}

// post queues an item for the dispatcher.
func (c *Client) post(it item) {
	c.undelivered.Add(1)
	c.events.Push(it)
}

// answer delivers a reply and registers the watch it set, as
// ZooKeeper's WatchRegistration does: exists leaves a data watch on a
// node that exists and an exist watch on one that does not; getData and
// getChildren leave theirs only on success.
func (c *Client) answer(it item) {
	r := it.req
	if !r.state.CompareAndSwap(stateWritten, stateAnswered) {
		return // abandoned by its caller: no watch, nobody to tell
	}
	res := result{reply: Reply{Zxid: it.hdr.Zxid, Sent: r.sent}}
	if it.tooLarge != nil {
		res.err = it.tooLarge
	} else if it.hdr.Err != wire.OK {
		res.err = it.hdr.Err
	} else if r.resp != nil {
		if err := wire.Unmarshal(it.body, r.resp); err != nil {
			res.err = err
		}
	}
	if w := r.watch; w != nil {
		switch {
		case w.kind == KindExist && it.hdr.Err == wire.OK:
			w.kind = KindData
			res.watched = true
		case w.kind == KindExist && it.hdr.Err == wire.ErrNoNode:
			res.watched = true
		case (w.kind == KindPersistent || w.kind == KindPersistentRecursive) &&
			(it.hdr.Err == wire.OK || it.hdr.Err == wire.ErrNoNode):
			res.watched = true
		case it.hdr.Err == wire.OK && res.err == nil:
			res.watched = true
		}
		if res.watched {
			c.watches.add(w)
		}
	}
	if rm := r.removes; rm != nil && it.hdr.Err == wire.OK {
		for w, ev := range c.watches.remove(rm.Path, rm.Type) {
			w.deliver(Event{Type: ev, State: wire.StateSyncConnected, Path: rm.Path})
		}
	}
	r.done <- res
}

// changed handles a change of the connection.
func (c *Client) changed(it item) {
	for _, r := range it.inflight {
		r.finish(result{err: it.err})
	}
	for _, r := range it.unsent {
		r.failUnsent(it.err)
	}
	var ws []*Watch
	switch {
	case it.end:
		ws = c.watches.clear()
	case it.state == wire.StateSyncConnected && !it.rearmed:
		ws = c.watches.sessionOnly()
	default:
		ws = c.watches.all()
	}
	for _, w := range ws {
		w.deliver(Event{Type: wire.EventNone, State: it.state})
	}
	if it.ack != nil {
		close(it.ack)
	}
}

// forgot ends a watch that Forget removed, unless it ended already.
func (c *Client) forgot(w *Watch) {
	if !c.watches.drop(w) {
		return
	}
	ev := wire.EventDataWatchRemoved
	switch w.kind {
	case KindChild:
		ev = wire.EventChildWatchRemoved
	case KindPersistent, KindPersistentRecursive:
		ev = wire.EventPersistentWatchRemoved
	}
	w.deliver(Event{Type: ev, State: wire.StateSyncConnected, Path: w.path})
}
