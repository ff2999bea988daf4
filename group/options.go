package group

import "github.com/zkcoord/zkcoord"

// Option configures a membership; Join and JoinConfig take it.
type Option func(*options)

type options struct {
	events func(zkcoord.RecoveryEvent)
}

// WithRecoveryEvents calls f with every zkcoord.RecoveryEvent of a
// membership started with JoinConfig (session started, session ended with
// its cause, recovering, recovered), in order, on a goroutine of its own,
// so that a slow f never delays a recovery. Join rejects it: its
// membership lives on one Session.
func WithRecoveryEvents(f func(zkcoord.RecoveryEvent)) Option {
	return func(o *options) { o.events = f }
}
