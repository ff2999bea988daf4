package supervise

import (
	"context"

	"github.com/zkcoord/zkcoord"
)

// ContextOwnership is an ownership that lasts as long as its context: its
// Err is the context's cause. It stands for an ownership narrowed by the
// command (a failing health check, the end of a failover activation).
type ContextOwnership struct {
	Ctx    context.Context
	Fenced zkcoord.Fence
}

func (o ContextOwnership) Context() context.Context { return o.Ctx }
func (o ContextOwnership) Done() <-chan struct{}    { return o.Ctx.Done() }
func (o ContextOwnership) Err() error               { return context.Cause(o.Ctx) }
func (o ContextOwnership) Fence() zkcoord.Fence     { return o.Fenced }
