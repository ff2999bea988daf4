package zkserver

import "time"

// hold waits until a chunk read at at is due, that is until the delay in
// force has passed since then. A change of the delay while it waits counts.
// It reports false when the link closed meanwhile.
func (l *link) hold(at time.Time) bool {
	for {
		f := l.p.faults.Load()
		wait := f.delay - time.Since(at)
		switch {
		case wait <= 0:
			return true
		case wait < coarseTimers:
			// The runtime's timers may fire a millisecond late (they
			// wait in epoll with a timeout in whole milliseconds); a
			// short wait is slept precisely.
			sleepPrecisely(wait)
			return true
		}
		// Wake early, and sleep what is left precisely.
		t := time.NewTimer(wait - coarseTimers/2)
		select {
		case <-t.C:
		case <-f.changed:
			t.Stop()
		case <-l.done:
			t.Stop()
			return false
		}
	}
}

// coarseTimers is the wait below which the runtime's timers are too coarse.
const coarseTimers = 5 * time.Millisecond
