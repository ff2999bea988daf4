package recipe

import (
	"context"

	"github.com/zkcoord/zkcoord"
)

// WaitEvent waits until the watch w fires, ctx ends or the Session ends. It
// returns the event, or ctx's error, or the Session's. An event of type
// zkcoord.EventNotWatching (the watch was dropped because the Session
// ended) is returned as the Session's error.
func WaitEvent(ctx context.Context, sess *zkcoord.Session, w <-chan zkcoord.Event) (zkcoord.Event, error) {
	select {
	case ev := <-w:
		if ev.Type == zkcoord.EventNotWatching {
			if err := sess.Err(); err != nil {
				return ev, err
			}
		}
		return ev, nil
	case <-ctx.Done():
		return zkcoord.Event{}, ctx.Err()
	case <-sess.Done():
		return zkcoord.Event{}, sess.Err()
	}
}
