package zkcoord

import (
	"context"
	"errors"
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

// WatchPredecessor is the step of the herd-free wait that locks and
// elections share. look lists the contenders and returns the path of the
// node to wait for, or "" when there is none; WatchPredecessor then sets a
// data watch on that node, reading it as Curator does rather than calling
// exists, so that a node already gone leaves no watch behind. A node gone
// before its watch is set means the order has changed: look runs again,
// until it names a node that is there, names none, or fails. It returns
// the node, its data and the watch, or look's error, or the read's.
func (s *Session) WatchPredecessor(ctx context.Context, look func() (string, error)) (string, []byte, <-chan Event, error) {
	for {
		pred, err := look()
		if err != nil || pred == "" {
			return pred, nil, nil, err
		}
		data, _, w, err := s.GetW(ctx, pred)
		if errors.Is(err, ErrNoNode) {
			continue
		}
		if err != nil {
			return "", nil, nil, err
		}
		return pred, data, w, nil
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
