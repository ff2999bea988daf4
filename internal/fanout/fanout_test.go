package fanout

import (
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Each calls f once for every index, never more than limit at a time, and
// returns only when all calls have returned.
func TestEachBoundsAndWaits(t *testing.T) {
	for _, c := range []struct{ n, limit int }{{0, 4}, {1, 4}, {10, 3}, {10, 1}, {5, 0}} {
		var mu sync.Mutex
		running, most := 0, 0
		calls := make([]int, c.n)
		release := make(chan struct{})
		started := make(chan struct{}, c.n)
		done := make(chan struct{})
		go func() {
			defer close(done)
			Each(c.n, c.limit, func(i int) {
				mu.Lock()
				calls[i]++
				running++
				most = max(most, running)
				mu.Unlock()
				started <- struct{}{}
				<-release
				mu.Lock()
				running--
				mu.Unlock()
			})
		}()
		// The first calls hold their slots until all of them run.
		for range min(c.n, max(c.limit, 1)) {
			<-started
		}
		close(release)
		<-done
		if running != 0 {
			t.Errorf("n=%d limit=%d: Each returned with %d calls running", c.n, c.limit, running)
		}
		if most > max(c.limit, 1) {
			t.Errorf("n=%d limit=%d: %d calls ran at once", c.n, c.limit, most)
		}
		for i, k := range calls {
			if k != 1 {
				t.Errorf("n=%d limit=%d: f(%d) called %d times", c.n, c.limit, i, k)
			}
		}
	}
}
