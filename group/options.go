package group

import (
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Option configures a membership; Join and JoinConfig take it.
type Option func(*options)

type options struct {
	events func(zkcoord.RecoveryEvent)
}

// newOptions checks a member's id and applies opts.
func newOptions(id string, opts []Option) (options, error) {
	var o options
	if err := zkcoord.ValidateName(id); err != nil {
		return o, fmt.Errorf("group: member id: %w", err)
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o, nil
}

// WithRecoveryEvents calls f with every zkcoord.RecoveryEvent of a
// membership started with JoinConfig (session started, session ended with
// its cause, recovering, recovered), in order, on a goroutine of its own,
// so that a slow f never delays a recovery. Join rejects it: its
// membership lives on one Session.
func WithRecoveryEvents(f func(zkcoord.RecoveryEvent)) Option {
	return func(o *options) { o.events = f }
}
