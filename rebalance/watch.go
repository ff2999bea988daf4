package rebalance

import (
	"context"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// snapshot is one reading of a watched node's children.
type snapshot struct {
	children []string
	stat     *zkcoord.Stat
	err      error
}

// watchChildren reads path's children with a watch, sends the result on
// the returned channel, waits for the watch to fire and repeats, until ctx
// ends or a read fails (the failure is sent). Every change after a
// snapshot's read causes a newer snapshot: none is lost.
func watchChildren(ctx context.Context, wg *sync.WaitGroup, sess *zkcoord.Session, path string) <-chan snapshot {
	return watchLoop(ctx, wg, func() (snapshot, <-chan zkcoord.Event) {
		kids, st, w, err := sess.ChildrenW(ctx, path)
		return snapshot{children: kids, stat: st, err: err}, w
	})
}

func watchLoop(ctx context.Context, wg *sync.WaitGroup, read func() (snapshot, <-chan zkcoord.Event)) <-chan snapshot {
	out := make(chan snapshot)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			s, w := read()
			if s.err != nil && ctx.Err() != nil {
				return
			}
			select {
			case out <- s:
			case <-ctx.Done():
				return
			}
			if s.err != nil {
				return
			}
			// The channel delivers one event, or EventNotWatching when the
			// Session ends, after which the next read fails.
			select {
			case <-w:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
