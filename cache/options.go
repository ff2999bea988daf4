package cache

import "github.com/zkcoord/zkcoord"

// Option adjusts a tree cache.
type Option func(*options)

type options struct {
	maxDepth int
	events   func(zkcoord.RecoveryEvent)
}

// WithMaxDepth limits a tree cache to the nodes at most depth levels below
// its root: 0 caches the root alone, 1 the root and its children. Children
// of nodes at the limit are neither listed nor watched. Negative means no
// limit, the default.
func WithMaxDepth(depth int) Option {
	return func(o *options) { o.maxDepth = depth }
}

// WithRecoveryEvents calls f with every zkcoord.RecoveryEvent of a cache
// started with NewTreeConfig (session started, session ended with its
// cause, recovering, recovered), in order, on a goroutine of its own, so
// that a slow f never delays a recovery. NewNode, NewChildren and NewTree
// reject it: one Session is one ZooKeeper session.
func WithRecoveryEvents(f func(zkcoord.RecoveryEvent)) Option {
	return func(o *options) { o.events = f }
}
