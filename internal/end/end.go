// Package end records, once, why something that can end has ended: the
// Done channel and the Err of a membership or a claim, which say the same
// thing and must agree (Err is nil exactly until Done is closed).
package end

import "sync"

// End is closed once, with a cause. It is safe for concurrent use; its
// zero value is not usable: use New.
type End struct {
	mu   sync.Mutex
	done chan struct{}
	err  error
}

// New returns an End that has not ended.
func New() *End { return &End{done: make(chan struct{})} }

// Done is closed when the End has ended.
func (e *End) Done() <-chan struct{} { return e.done }

// Err returns nil until Done is closed, then the cause End was first given.
func (e *End) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// End records err as the cause and closes Done, the first time it is
// called; it reports whether this call did.
func (e *End) End(err error) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.done:
		return false
	default:
	}
	e.err = err
	close(e.done)
	return true
}
