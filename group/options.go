package group

import (
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Option configures a membership; Join and JoinConfig take it.
type Option func(*options)

type options struct {
	events chan<- zkcoord.RecoveryEvent
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

// WithRecoveryEvents sends every zkcoord.RecoveryEvent of a membership
// started with JoinConfig (session started, session ended with its
// cause, recovering, recovered) to ch; its owner is the membership, until
// it has ended.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
// Join rejects it: its membership lives on one Session.
func WithRecoveryEvents(ch chan<- zkcoord.RecoveryEvent) Option {
	return func(o *options) { o.events = ch }
}
