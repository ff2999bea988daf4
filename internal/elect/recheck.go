package elect

import (
	"context"
	"time"
)

// Recheck runs a periodic check off its owner's goroutine, one at a time,
// so that a read waiting out a partition never holds up the state machine
// (a Resign, the Session's end). The owner selects on Tick, calls Start,
// and receives the check's result from Result.
type Recheck struct {
	ticker *time.Ticker
	result chan error
	busy   bool
	check  func(ctx context.Context) error
	ctx    context.Context
}

// NewRecheck returns a re-check of check every interval d. Stop it when
// done; a check still running then ends with its own calls.
func NewRecheck(ctx context.Context, d time.Duration, check func(ctx context.Context) error) *Recheck {
	return &Recheck{ticker: time.NewTicker(d), result: make(chan error, 1), check: check, ctx: ctx}
}

// Tick fires every interval.
func (r *Recheck) Tick() <-chan time.Time { return r.ticker.C }

// Start runs the check unless one is running.
func (r *Recheck) Start() {
	if r.busy {
		return
	}
	r.busy = true
	go func() { r.result <- r.check(r.ctx) }()
}

// Result delivers a check's result; the owner must call Done after each.
func (r *Recheck) Result() <-chan error { return r.result }

// Done marks the last check as received.
func (r *Recheck) Done() { r.busy = false }

// Stop stops the ticker.
func (r *Recheck) Stop() { r.ticker.Stop() }
