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
// (pass Record to its WithRecoveryEvents).
type Recoveries struct {
	mu     sync.Mutex
	events []zkcoord.RecoveryEvent
}

// Record appends ev.
func (r *Recoveries) Record(ev zkcoord.RecoveryEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

// Events returns the events recorded so far.
func (r *Recoveries) Events() []zkcoord.RecoveryEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
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
