// Package delay is the one way code in zkcoord waits a while: a pause
// that ends early when its context ends or when something it depends on
// stops. Nothing orders events with it; it only spaces retries and
// schedules.
package delay

import (
	"context"
	"time"
)

// Sleep waits d and reports true, or reports false as soon as ctx ends or
// stop (if not nil) closes.
func Sleep(ctx context.Context, d time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	}
}
