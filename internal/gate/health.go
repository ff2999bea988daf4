package gate

import (
	"context"
	"time"
)

// Health runs a check every interval and keeps its verdict in a Gate: shut
// while the last Failures checks in a row failed, open again after the
// first check that passes. Each check gets at most the interval to answer.
// Run is the only writer of the gate.
type Health struct {
	*Gate
	check    func(ctx context.Context) error
	every    time.Duration
	failures int
	onFail   func(err error, inARow int)
}

// NewHealth returns a Health whose gate starts open or shut; onFail, if
// not nil, hears of every failed check.
func NewHealth(check func(ctx context.Context) error, every time.Duration, failures int,
	open bool, onFail func(err error, inARow int)) *Health {
	return &Health{Gate: New(open), check: check, every: every, failures: failures, onFail: onFail}
}

// Run checks at once, then every interval, until ctx ends.
func (h *Health) Run(ctx context.Context) {
	failed := 0
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		cctx, cancel := context.WithTimeout(ctx, h.every)
		err := h.check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failed++
			if h.onFail != nil {
				h.onFail(err, failed)
			}
		} else {
			failed = 0
		}
		h.Set(failed < h.failures)
		t.Reset(h.every)
	}
}
