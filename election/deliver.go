package election

import "sync"

// deliverer runs a candidate's event callbacks, and the closing of the
// channels that tell a caller an event happened (Elected, Done, the end of
// Nominate), in the order the state machine asked for them, on a goroutine
// of its own. So a slow WithEvents callback delays later events and those
// channels, never the state machine: a leader's Leadership.Done closes on
// loss whatever the callback does. Nothing is dropped; the queue is
// unbounded. The goroutine runs only while work is pending.
type deliverer struct {
	mu      sync.Mutex
	pending []func()
	running bool
}

// do runs f after everything queued before it, without blocking.
func (d *deliverer) do(f func()) {
	d.mu.Lock()
	d.pending = append(d.pending, f)
	if d.running {
		d.mu.Unlock()
		return
	}
	d.running = true
	d.mu.Unlock()
	go d.drain()
}

func (d *deliverer) drain() {
	for {
		d.mu.Lock()
		fs := d.pending
		d.pending = nil
		if len(fs) == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		for _, f := range fs {
			f()
		}
	}
}
