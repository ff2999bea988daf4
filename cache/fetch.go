package cache

import (
	"context"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// parallel is how many reads a load or resync on one-shot watches keeps in
// flight, pipelined on the Session's one connection.
const parallel = 64

// read is what to read of one node.
type read struct {
	path  string
	depth int
	// readData and listKids say what to read; watchData and watchKids
	// ask for a new watch, false when one is already set.
	readData, watchData, listKids, watchKids bool
}

// result is what was read.
type result struct {
	read
	data    []byte
	stat    *zkcoord.Stat
	dataW   <-chan zkcoord.Event
	kids    []string
	kidsW   <-chan zkcoord.Event
	err     error // of the data read; wraps ErrNoNode if the node is gone
	kidsErr error
}

// fetch performs the reads concurrently and returns their results in the
// order asked.
func (c *Cache) fetch(ctx context.Context, reads []read) []result {
	res := make([]result, len(reads))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(parallel, len(reads)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res[i] = c.readOne(ctx, reads[i])
			}
		}()
	}
	for i := range reads {
		next <- i
	}
	close(next)
	wg.Wait()
	return res
}

// readHook, when set by a test before a cache starts, runs before each
// node's read.
var readHook func(path string)

func (c *Cache) readOne(ctx context.Context, r read) result {
	if readHook != nil {
		readHook(r.path)
	}
	res := result{read: r}
	switch {
	case !r.readData:
	case r.watchData:
		res.data, res.stat, res.dataW, res.err = c.sess.GetW(ctx, r.path)
	default:
		res.data, res.stat, res.err = c.sess.Get(ctx, r.path)
	}
	if res.err != nil || !r.listKids {
		return res
	}
	if r.watchKids {
		res.kids, _, res.kidsW, res.kidsErr = c.sess.ChildrenW(ctx, r.path)
	} else {
		res.kids, _, res.kidsErr = c.sess.Children(ctx, r.path)
	}
	return res
}
