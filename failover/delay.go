package failover

import "time"

// WithLockDelay makes an instance wait d before it becomes active when the
// previous active one did not stop cleanly (its session expired, or its
// election node was deleted): election.WithLockDelay on the failover's
// election. An active instance paused past its session timeout has that
// time to wake, see its loss and stop before the next one fences it and
// takes over; the fencing function still runs. Default: 0, none.
func WithLockDelay(d time.Duration) Option { return func(o *options) { o.delay = d } }
