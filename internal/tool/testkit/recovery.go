package testkit

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
)

// Recoveries collects the zkcoord.RecoveryEvents of a supervised recipe
// (pass C to its WithRecoveryEvents). Its zero value is ready to use.
type Recoveries struct {
	mu     sync.Mutex
	ch     chan zkcoord.RecoveryEvent // events not yet read into events
	events []zkcoord.RecoveryEvent
}

// C returns the channel to pass to WithRecoveryEvents. Its buffer holds
// far more events than a test causes, so none is dropped after the
// recipe ended.
func (r *Recoveries) C() chan<- zkcoord.RecoveryEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch == nil {
		r.ch = make(chan zkcoord.RecoveryEvent, 1024)
	}
	return r.ch
}

// Events returns the events received so far, in order.
func (r *Recoveries) Events() []zkcoord.RecoveryEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.ch) > 0 {
		r.events = append(r.events, <-r.ch)
	}
	return slices.Clone(r.events)
}

// Await waits until an event of kind k has been recorded after the first
// from events, and returns it and the number of events up to it.
func (r *Recoveries) Await(t testing.TB, d time.Duration, from int, k zkcoord.RecoveryKind) (zkcoord.RecoveryEvent, int) {
	t.Helper()
	var (
		found zkcoord.RecoveryEvent
		at    int
	)
	WaitFor(t, d, "recovery event "+k.String(), func() error {
		evs := r.Events()
		for i := from; i < len(evs); i++ {
			if evs[i].Kind == k {
				found, at = evs[i], i+1
				return nil
			}
		}
		return fmt.Errorf("%w: %+v", ErrNotYet, evs)
	})
	return found, at
}
