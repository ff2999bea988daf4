package counter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zkcoord/zkcoord"
)

// Watcher delivers the counter's changes. Its channel always ends up
// holding the newest count: a reader that falls behind skips intermediate
// counts but never misses the latest.
type Watcher struct {
	c      *Counter
	ch     chan Count
	cancel context.CancelFunc
	done   chan struct{}

	stopped atomic.Bool
	mu      sync.Mutex
	err     error
}

// Watch starts watching the counter. The channel first receives the current
// count, then each newer one. It is closed when ctx ends, Stop is called,
// the Session ends, or the node holds corrupt data; Err then says which.
// A node that does not exist (yet, or any more) is waited for; it is not
// created.
func (c *Counter) Watch(ctx context.Context) *Watcher {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{c: c, ch: make(chan Count), cancel: cancel, done: make(chan struct{})}
	go w.run(ctx)
	return w
}

// Changes returns the channel of counts.
func (w *Watcher) Changes() <-chan Count { return w.ch }

// Stop stops the watcher and waits until its goroutine has ended.
func (w *Watcher) Stop() {
	w.stopped.Store(true)
	w.cancel()
	<-w.done
}

// Err returns why the channel was closed: nil after Stop, otherwise ctx's
// error, the Session's error or a decoding error wrapping zkcoord.ErrBadData.
// It returns nil while the watcher runs.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Watcher) run(ctx context.Context) {
	err := w.loop(ctx)
	if w.stopped.Load() {
		err = nil
	}
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	close(w.ch)
	close(w.done)
}

func (w *Watcher) loop(ctx context.Context) error {
	var (
		sent    = Count{Version: -1}
		pending Count
		out     chan Count // non-nil while pending holds an unsent count
	)
	for {
		cur, fire, err := w.read(ctx)
		if err != nil {
			return err
		}
		if cur != nil && *cur != sent {
			pending, out = *cur, w.ch
		}
		for fire != nil {
			select {
			case out <- pending:
				sent, out = pending, nil
			case <-fire:
				fire = nil
			case <-ctx.Done():
				return ctx.Err()
			case <-w.c.sess.Done():
				return w.c.sess.Err()
			}
		}
	}
}

// read returns the current count (nil if the node does not exist) and a
// watch that fires on its next change.
func (w *Watcher) read(ctx context.Context) (*Count, <-chan zkcoord.Event, error) {
	sess := w.c.sess
	for {
		data, st, fire, err := sess.GetW(ctx, w.c.path)
		if err == nil {
			cur, err := w.c.decode(data, st)
			if err != nil {
				return nil, nil, err
			}
			return &cur, fire, nil
		}
		if !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, nil, fmt.Errorf("counter: watch %s: %w", w.c.path, err)
		}
		ok, _, fire, err := sess.ExistsW(ctx, w.c.path)
		if err != nil {
			return nil, nil, fmt.Errorf("counter: watch %s: %w", w.c.path, err)
		}
		if !ok {
			return nil, fire, nil
		}
	}
}
