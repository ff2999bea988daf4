package config

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zkcoord/zkcoord"
)

// Watcher delivers a configuration node's versions as values of type V
// (Version for a Node, Value[T] for a JSON). Its channel always ends up
// holding the newest version: a reader that falls behind skips intermediate
// versions but never misses the latest.
type Watcher[V any] struct {
	ch     chan V
	cancel context.CancelFunc
	done   chan struct{}

	stopped atomic.Bool
	mu      sync.Mutex
	err     error
}

// Watch starts watching the node. The channel first receives the current
// version (Exists false if the node does not exist), then every newer one,
// including deletions. It is closed when ctx ends, Stop is called or the
// Session ends; Err then says why.
func (n *Node) Watch(ctx context.Context) *Watcher[Version] {
	return watch(ctx, n, func(v Version) Version { return v })
}

func watch[V any](ctx context.Context, n *Node, conv func(Version) V) *Watcher[V] {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher[V]{ch: make(chan V), cancel: cancel, done: make(chan struct{})}
	go func() {
		err := w.loop(ctx, n, conv)
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

// Changes returns the channel of versions.
func (w *Watcher[V]) Changes() <-chan V { return w.ch }

// Stop stops the watcher and waits until its goroutine has ended.
func (w *Watcher[V]) Stop() {
	w.stopped.Store(true)
	w.cancel()
	<-w.done
}

// Err returns why the channel was closed: nil after Stop, otherwise ctx's
// error or the Session's. It returns nil while the watcher runs.
func (w *Watcher[V]) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Watcher[V]) loop(ctx context.Context, n *Node, conv func(Version) V) error {
	var (
		last    *Version // the newest version read
		pending V
		out     chan V // non-nil while pending is unsent
	)
	for {
		cur, fire, err := read(ctx, n)
		if err != nil {
			return err
		}
		if last == nil || cur.Exists != last.Exists || cur.Zxid != last.Zxid {
			pending, out = conv(cur), w.ch
			last = &cur
		}
		for fire != nil {
			select {
			case out <- pending:
				out = nil
			case <-fire:
				fire = nil
			case <-ctx.Done():
				return ctx.Err()
			case <-n.sess.Done():
				return n.sess.Err()
			}
		}
	}
}

// read returns the node's current version and a watch that fires when it
// changes (including creation and deletion).
func read(ctx context.Context, n *Node) (Version, <-chan zkcoord.Event, error) {
	for {
		data, st, fire, err := n.sess.GetW(ctx, n.path)
		if err == nil {
			return versionOf(data, st), fire, nil
		}
		if !errors.Is(err, zkcoord.ErrNoNode) {
			return Version{}, nil, fmt.Errorf("config: watch %s: %w", n.path, err)
		}
		ok, _, fire, err := n.sess.ExistsW(ctx, n.path)
		if err != nil {
			return Version{}, nil, fmt.Errorf("config: watch %s: %w", n.path, err)
		}
		if !ok {
			return Version{Version: -1}, fire, nil
		}
	}
}
