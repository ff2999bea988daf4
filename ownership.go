package zkcoord

import "context"

// Ownership is something a client holds on ZooKeeper until it ends: a
// lock's or a semaphore's lease, a leadership. Do the owner's work under
// Context, stop when Done closes, and pass Fence's token to every resource
// the work writes (or make the writes conditional with GuardedMulti).
//
// Implemented by *lock.Lease and *election.Leadership.
type Ownership interface {
	// Context is cancelled when the ownership ends, with Err as its
	// cause.
	Context() context.Context
	// Done is closed when the ownership ends: given up or lost.
	Done() <-chan struct{}
	// Err is nil while the ownership lasts, then why it ended.
	Err() error
	// Fence proves the ownership: the owned node and its fencing token.
	Fence() Fence
}
