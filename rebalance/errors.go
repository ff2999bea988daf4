package rebalance

import "errors"

// Errors reported by this package. They are wrapped with context; check
// them with errors.Is.
var (
	// ErrStopped is the cause of every resource context cancelled because
	// the client was stopped with Stop.
	ErrStopped = errors.New("rebalance: client stopped")
	// ErrMoved is the cause when a rebalancing gave the resource to another
	// client.
	ErrMoved = errors.New("rebalance: resource moved to another client")
	// ErrRemoved is the cause when the resource was removed from the group.
	ErrRemoved = errors.New("rebalance: resource removed from the group")
	// ErrRebalancing is the cause when the mode stops every resource during
	// a rebalancing (resource-barrier and global-barrier modes), even one
	// that the client keeps.
	ErrRebalancing = errors.New("rebalance: stopped for a rebalancing")
	// ErrBarrierLost is the cause when the resource's barrier node was
	// deleted or replaced by someone other than this client, or can no
	// longer be watched (the error that prevents it is wrapped too).
	ErrBarrierLost = errors.New("rebalance: resource barrier deleted by someone else")
	// ErrHandler wraps an error returned by, or a panic in, a Handler
	// function. From Assigned it aborts the client; from Unassigned it is
	// reported to Handler.StopFailed and Unassigned is called again.
	ErrHandler = errors.New("rebalance: handler failed")
	// ErrDeposed means another client bumped the term while this client was
	// coordinator.
	ErrDeposed = errors.New("rebalance: coordinator deposed by a newer term")
	// ErrMembershipLost means this client's node under clients/ vanished
	// while its session lived (someone deleted it).
	ErrMembershipLost = errors.New("rebalance: client node deleted")
	// ErrInconsistent means ZooKeeper held something the protocol does not
	// allow, such as a missing group node; the client stops everything.
	ErrInconsistent = errors.New("rebalance: potentially inconsistent state")
	// ErrInvalidOption wraps every option and argument validation failure.
	ErrInvalidOption = errors.New("rebalance: invalid option")
	// ErrResourceExists is returned by AddResource for a resource that is
	// already registered; wrapped together with zkcoord.ErrOutcomeUnknown
	// when the create's reply was lost and it may have been this call's.
	ErrResourceExists = errors.New("rebalance: resource already registered")
	// ErrNoResource is returned by RemoveResource for an unknown resource.
	ErrNoResource = errors.New("rebalance: no such resource")
	// ErrNoGroup is returned by Describe for a group that does not exist.
	ErrNoGroup = errors.New("rebalance: no such group")
)
