package zkcoord

import (
	"context"
	"sync"
	"sync/atomic"
)

// Watcher follows something that is read together with a ZooKeeper watch
// (a node's data, a node's children) and delivers its newest value. Its
// channel always ends up holding the newest value: a reader that falls
// behind skips intermediate values but never misses the latest. One
// goroutine owns it; it is safe for concurrent use.
//
// The recipes' watchers (config, group, counter) are Watchers of their own
// value types; NewWatcherConfig keeps one going across Sessions.
type Watcher[V any] struct {
	ch     chan V
	cancel context.CancelFunc
	done   chan struct{}

	// Owned by the watcher's goroutine: the newest value not yet
	// delivered, and out, w.ch while there is one (nil otherwise).
	pending V
	out     chan V

	stopped atomic.Bool
	mu      sync.Mutex
	err     error
}

// ReadFunc reads the current value and sets a watch that fires on its next
// change. ok false means there is nothing new to deliver this time: the
// value has not changed since the last read, or the node does not exist
// and only its creation is awaited. A Watcher calls its ReadFunc from one
// goroutine only, so the function may keep what it last read.
type ReadFunc[V any] func(ctx context.Context) (v V, ok bool, w <-chan Event, err error)

// NewWatcher starts following: it calls read, delivers the value if read
// says it is new, waits for the watch to fire, and reads again. The channel
// is closed when ctx ends, Stop is called, the Session ends or read fails;
// Err then says why.
func NewWatcher[V any](ctx context.Context, s *Session, read ReadFunc[V]) *Watcher[V] {
	return startWatcher(ctx, func(ctx context.Context, w *Watcher[V]) error {
		return w.follow(ctx, s, read)
	})
}

// NewWatcherConfig follows as NewWatcher does, across Sessions: it runs
// under Supervise with cfg and opts, and on every Session Supervise opens
// it follows with the ReadFunc that newRead returns for that Session. One
// goroutine makes every call of newRead and of the ReadFuncs, in turn, so
// they may share what they last read: a value that did not change while
// no Session was open is then not delivered again. A value read before a
// Session ended and not yet received is delivered once the next Session
// is open. The channel is closed when ctx ends, Stop is called, or
// Supervise ends (a read failed with its Session alive, or a Session
// cannot be opened with cfg at all); Err then says why.
func NewWatcherConfig[V any](ctx context.Context, cfg Config, newRead func(*Session) ReadFunc[V], opts ...SuperviseOption) *Watcher[V] {
	return startWatcher(ctx, func(ctx context.Context, w *Watcher[V]) error {
		return Supervise(ctx, cfg, func(ctx context.Context, s *Session) error {
			return w.follow(ctx, s, newRead(s))
		}, opts...)
	})
}

func startWatcher[V any](ctx context.Context, run func(context.Context, *Watcher[V]) error) *Watcher[V] {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher[V]{ch: make(chan V), cancel: cancel, done: make(chan struct{})}
	go func() {
		err := run(ctx, w)
		if w.stopped.Load() {
			err = nil
		}
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		close(w.ch)
		close(w.done)
	}()
	return w
}

// Changes returns the channel of values.
func (w *Watcher[V]) Changes() <-chan V { return w.ch }

// Stop stops the watcher and waits until its goroutine has ended.
func (w *Watcher[V]) Stop() {
	w.stopped.Store(true)
	w.cancel()
	<-w.done
}

// Err returns why the channel was closed: nil after Stop, otherwise ctx's
// error, the Session's or the read's. It returns nil while the watcher
// runs.
func (w *Watcher[V]) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// follow reads and delivers on one Session until ctx or the Session ends
// or read fails. The value not yet delivered stays in w.pending, for the
// next Session of a NewWatcherConfig.
func (w *Watcher[V]) follow(ctx context.Context, s *Session, read ReadFunc[V]) error {
	for {
		cur, ok, fire, err := read(ctx)
		if err != nil {
			return err
		}
		if ok {
			w.pending, w.out = cur, w.ch
		}
		for fire != nil {
			select {
			case w.out <- w.pending:
				w.out = nil
			case <-fire:
				fire = nil
			case <-ctx.Done():
				return ctx.Err()
			case <-s.done:
				return s.Err()
			}
		}
	}
}
