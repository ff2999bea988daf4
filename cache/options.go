package cache

import "github.com/zkcoord/zkcoord"

// Option adjusts a tree cache.
type Option func(*options)

type options struct {
	maxDepth int
	events   chan<- zkcoord.RecoveryEvent
}

// WithMaxDepth limits a tree cache to the nodes at most depth levels below
// its root: 0 caches the root alone, 1 the root and its children. Children
// of nodes at the limit are neither listed nor watched. Negative means no
// limit, the default.
func WithMaxDepth(depth int) Option {
	return func(o *options) { o.maxDepth = depth }
}

// WithRecoveryEvents sends every zkcoord.RecoveryEvent of a cache
// started with NewTreeConfig (session started, session ended with its
// cause, recovering, recovered) to ch; its owner is the cache, until it
// has ended.
// Delivery follows “Event channels” in the [zkcoord] package documentation:
// in order, none dropped while the owner lives, the channel never closed.
// NewNode, NewChildren and NewTree reject it: one Session is one
// ZooKeeper session.
func WithRecoveryEvents(ch chan<- zkcoord.RecoveryEvent) Option {
	return func(o *options) { o.events = ch }
}
