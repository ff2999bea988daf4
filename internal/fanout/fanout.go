// Package fanout is the one way zkcoord runs independent calls side by
// side with a bound on how many run at once: reads of many nodes pipelined
// on one connection (a subtree walk, a cache's batches, an election's
// participants).
package fanout

import "sync"

// Each calls f(0) to f(n-1), each on a goroutine of its own, at most limit
// at a time, and returns once all have returned. f reports its results
// through what it closes over, for example the i-th slot of a slice.
func Each(n, limit int, f func(i int)) {
	slots := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}
