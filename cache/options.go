package cache

// Option adjusts a tree cache.
type Option func(*options)

type options struct {
	maxDepth int
}

// WithMaxDepth limits a tree cache to the nodes at most depth levels below
// its root: 0 caches the root alone, 1 the root and its children. Children
// of nodes at the limit are neither listed nor watched. Negative means no
// limit, the default.
func WithMaxDepth(depth int) Option {
	return func(o *options) { o.maxDepth = depth }
}
