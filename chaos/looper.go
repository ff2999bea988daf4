package chaos

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// looper is what the clients of the queue, counter and discovery workloads
// share: Sessions that a sessions manager renews after each loss, and one
// goroutine that runs the client's loop until stop. Such a client adds and
// removes no resource and ends only when told, so done never closes.
type looper struct {
	sm     *sessions
	cancel context.CancelFunc
	looped chan struct{}
	ended  chan struct{}
}

// start opens the first Session, bounded by ctx, and runs loop on its own
// goroutine until stop.
func (l *looper) start(ctx context.Context, cfg zkcoord.Config, em *event.Emitter, log *slog.Logger,
	loop func(context.Context)) error {
	l.looped, l.ended = make(chan struct{}), make(chan struct{})
	l.sm = startSessions(cfg, em, log)
	if _, err := l.sm.get(ctx); err != nil {
		l.sm.close()
		return err
	}
	lctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go func() {
		defer close(l.looped)
		loop(lctx)
	}()
	return nil
}

func (l *looper) add(string)    {}
func (l *looper) remove(string) {}

// stop ends the loop, waiting for it bounded by ctx, and closes the
// Sessions.
func (l *looper) stop(ctx context.Context) error {
	l.cancel()
	select {
	case <-l.looped:
	case <-ctx.Done():
		return fmt.Errorf("chaos: stop: %w", ctx.Err())
	}
	l.sm.close()
	return nil
}

func (l *looper) done() <-chan struct{} { return l.ended }
func (l *looper) err() error            { return nil }
