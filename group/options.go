package group

import "github.com/zkcoord/zkcoord"

// Option configures a membership; Join and JoinConfig take it.
type Option func(*options)

type options struct {
	events chan<- zkcoord.RecoveryEvent
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
