package elect

import (
	"context"
	"errors"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// Tenure watches a leader's office on a goroutine of its own: the term
// node (a bump or delete by anyone else deposes the leader), the leader's
// own node (deleted by someone else), and a periodic re-check of both that
// catches a lost notification. Over delivers, once, why the office ended:
// ErrTermChanged (a notification on the term node, or the re-check found
// the term bumped), ErrTermGone (the re-check found it deleted),
// ErrMissing (the leader's node is gone) or the Session's error. A
// notification is reported at once, before anything is asked of
// ZooKeeper: a successor may act as soon as the change that fired it is
// committed, and a read may take until the Session is declared Lost. The
// owner of the office reads Over and explains the end as it likes.
type Tenure struct {
	over   chan error
	cancel context.CancelFunc
	done   chan struct{}
	stop   sync.Once
}

// Keep starts watching off, the office TakeOffice gave, whose term node
// WatchTerm watches with termW. Stop the Tenure when the office ends.
func (c *Contender) Keep(off Office, termW <-chan zkcoord.Event) *Tenure {
	ctx, cancel := context.WithCancel(context.Background())
	t := &Tenure{over: make(chan error, 1), cancel: cancel, done: make(chan struct{})}
	go t.run(ctx, c, off, termW)
	return t
}

// Over delivers why the office ended.
func (t *Tenure) Over() <-chan error { return t.over }

// Stop stops watching and waits until the Tenure's goroutine has ended; a
// re-check still under way ends with its own read.
func (t *Tenure) Stop() {
	t.stop.Do(t.cancel)
	<-t.done
}

func (t *Tenure) run(ctx context.Context, c *Contender, off Office, termW <-chan zkcoord.Event) {
	defer close(t.done)
	rc := NewRecheck(ctx, c.recheck, func(ctx context.Context) error {
		_, err := c.CheckOffice(ctx, off)
		return err
	})
	defer rc.Stop()
	nodeW := c.ownW
	for {
		var end error
		select {
		case <-termW:
			if c.hooks.swallow() && c.sess.Err() == nil {
				termW = nil // as if the notification never came
				continue
			}
			end = ErrTermChanged
		case <-nodeW:
			if c.hooks.swallow() && c.sess.Err() == nil {
				nodeW = nil
				continue
			}
			end = ErrMissing
		case <-rc.Tick():
			rc.Start()
			continue
		case err := <-rc.Result():
			rc.Done()
			if !errors.Is(err, ErrTermGone) && !errors.Is(err, ErrTermChanged) && !errors.Is(err, ErrMissing) {
				// A read that did not get through; the Session's end,
				// if that is why, is reported on its own.
				continue
			}
			end = err
		case <-c.sess.Done():
			end = c.sess.Err()
		case <-ctx.Done():
			return
		}
		if err := c.sess.Err(); err != nil {
			end = err // a watch fires when the Session ends, too
		}
		t.over <- end
		return
	}
}
