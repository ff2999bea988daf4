package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/zkcoord/zkcoord"
)

// Watcher follows a group's membership. Its channel always ends up holding
// the newest snapshot: a reader that falls behind skips intermediate
// snapshots but never misses the latest.
type Watcher struct {
	sess   *zkcoord.Session
	path   string
	ch     chan []Member
	cancel context.CancelFunc
	done   chan struct{}

	stopped atomic.Bool
	mu      sync.Mutex
	err     error
}

// Watch starts following the group at path. The channel first receives the
// current members (empty if the group does not exist), then a snapshot
// after every change. It is closed when ctx ends, Stop is called or the
// Session ends; Err then says why.
func Watch(ctx context.Context, sess *zkcoord.Session, path string) (*Watcher, error) {
	if err := zkcoord.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{sess: sess, path: path, ch: make(chan []Member), cancel: cancel, done: make(chan struct{})}
	go func() {
		err := w.loop(ctx)
		if w.stopped.Load() {
			err = nil
		}
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		close(w.ch)
		close(w.done)
	}()
	return w, nil
}

// Changes returns the channel of snapshots.
func (w *Watcher) Changes() <-chan []Member { return w.ch }

// Stop stops the watcher and waits until its goroutine has ended.
func (w *Watcher) Stop() {
	w.stopped.Store(true)
	w.cancel()
	<-w.done
}

// Err returns why the channel was closed: nil after Stop, otherwise ctx's
// error or the Session's. It returns nil while the watcher runs.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Watcher) loop(ctx context.Context) error {
	var (
		last    []string // paths of the newest snapshot
		first   = true
		pending []Member
		out     chan []Member // non-nil while pending is unsent
	)
	for {
		snap, fire, err := w.read(ctx)
		if err != nil {
			return err
		}
		if paths := pathsOf(snap); first || !slices.Equal(paths, last) {
			pending, out, last, first = snap, w.ch, paths, false
		}
		for fire != nil {
			select {
			case out <- pending:
				out = nil
			case <-fire:
				fire = nil
			case <-ctx.Done():
				return ctx.Err()
			case <-w.sess.Done():
				return w.sess.Err()
			}
		}
	}
}

func pathsOf(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Path
	}
	return out
}

// read returns the current members and a watch on the group's children (or
// on the group node's creation, if it does not exist).
func (w *Watcher) read(ctx context.Context) ([]Member, <-chan zkcoord.Event, error) {
	for {
		children, _, fire, err := w.sess.ChildrenW(ctx, w.path)
		if err == nil {
			ms, err := members(ctx, w.sess, w.path, children)
			return ms, fire, err
		}
		if !errors.Is(err, zkcoord.ErrNoNode) {
			return nil, nil, fmt.Errorf("group: watch %s: %w", w.path, err)
		}
		ok, _, fire, err := w.sess.ExistsW(ctx, w.path)
		if err != nil {
			return nil, nil, fmt.Errorf("group: watch %s: %w", w.path, err)
		}
		if !ok {
			return []Member{}, fire, nil
		}
	}
}
