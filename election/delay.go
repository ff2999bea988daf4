package election

import (
	"context"
	"time"

	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/internal/lockdelay"
)

// WithLockDelay makes a candidate wait d before it takes office when the
// leader before it did not leave cleanly: its session expired, or its node
// was deleted by someone else. A leader paused past its session timeout (a
// GC pause, a stopped VM) cannot see its loss until it runs again; the
// delay gives it that time, so that with d longer than any pause a leader
// can suffer, two leaders never act at once, even without fencing.
// Default: 0, none (as in Curator and Kazoo).
//
// A leader with a lock-delay that leaves office deletes its node together
// with a mark, the node's name written to the election node's data, in
// one transaction; a follower that withdraws and a deposed leader leave no
// mark, so the candidate behind them waits the delay. The next
// candidate takes office at once only after such a release, or when it
// finds the election free after one on arrival (see
// docs/protocol.md#lock-delay). A Curator or Kazoo participant only
// deletes its node, so its leaving is treated as an expiry. The delay
// counts from the listing that showed the candidate first, never earlier
// than the disappearance; the candidate follows meanwhile.
func WithLockDelay(d time.Duration) Option {
	return func(o *options) { o.lockDelay = d }
}

// arrive reads the election node before the candidate's node is created,
// when the election has a lock-delay; the Tracker is nil otherwise.
func (c *candidate) arrive(ctx context.Context) (*lockdelay.Tracker, error) {
	e := c.el
	if e.opts.lockDelay <= 0 {
		return nil, nil
	}
	return elect.DetachValue(ctx, func(ctx context.Context) (*lockdelay.Tracker, error) {
		return lockdelay.Arrive(ctx, e.sess, e.path, e.opts.lockDelay, isParticipant)
	})
}
