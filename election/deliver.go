package election

// A candidate's events reach the WithEvents channel through a fifo.Feed,
// on a goroutine of the feed's own, and so does the closing of the
// channels that tell a caller that an event happened (placed, Elected):
// after the events that lead to it. So a slow reader delays later events
// and those channels, never the state machine: a leader's Leadership.Done
// closes on loss whatever the reader does. Nothing is dropped while the
// candidate runs; the queue is unbounded.

// after runs f once every event emitted before it has been sent, without
// blocking the caller.
func (c *candidate) after(f func()) { c.feed.Then(f) }

// end ends the candidate's feed, then closes done: by then every event
// the candidate will send is in the channel (or was dropped for want of
// room in it), and nothing is left running.
func (c *candidate) end() {
	c.feed.End()
	close(c.done)
}
