package election

// A candidate's WithEvents callbacks, and the closing of the channels that
// tell a caller that an event happened (Elected, Done, the end of
// nominate), run in the order the state machine asked for them, on a
// goroutine of the candidate's own. So a slow callback delays later events
// and those channels, never the state machine: a leader's Leadership.Done
// closes on loss whatever the callback does. Nothing is dropped; the queue
// is unbounded.

// after runs f once everything queued before it has run, without blocking
// the caller. The closing of done is the last thing a candidate queues.
func (c *candidate) after(f func()) {
	if c.events == nil {
		f()
		return
	}
	c.events.Push(f)
	c.deliverOnce.Do(func() { go c.deliver() })
}

// deliver runs what after queued until it has closed done.
func (c *candidate) deliver() {
	for {
		<-c.events.Ready()
		for _, f := range c.events.PopAll() {
			f()
		}
		select {
		case <-c.done:
			return
		default:
		}
	}
}
