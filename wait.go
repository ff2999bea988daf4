package zkcoord

import (
	"context"
	"time"

	"github.com/zkcoord/zkcoord/internal/delay"
)

// WaitEvent waits until the watch w fires, ctx ends or the Session ends. It
// returns the event, or ctx's error, or the Session's. An event of type
// EventNotWatching (the watch was dropped because the Session ended) is
// returned as the Session's error.
func (s *Session) WaitEvent(ctx context.Context, w <-chan Event) (Event, error) {
	select {
	case ev := <-w:
		if ev.Type == EventNotWatching {
			if err := s.alive(); err != nil {
				return ev, err
			}
		}
		return ev, nil
	case <-ctx.Done():
		return Event{}, ctx.Err()
	case <-s.done:
		return Event{}, s.Err()
	}
}

// Sleep waits for d to pass, ctx to end or the Session to end. It returns
// nil after d, or ctx's error, or the Session's.
func (s *Session) Sleep(ctx context.Context, d time.Duration) error {
	if delay.Sleep(ctx, d, s.done) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Err()
}
