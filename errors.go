package zkcoord

import (
	"errors"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// Errors that describe how a Session ended. Session.Err wraps exactly one of
// them; check with errors.Is.
var (
	// ErrSessionLost: no server response for Config.LostAfter of the
	// negotiated timeout. The server may still hold the session for a while;
	// this side has stopped relying on it, and leaves its ephemeral nodes
	// for the server to delete when it expires the session.
	ErrSessionLost = errors.New("zkcoord: session lost")
	// ErrSessionExpired: the server reported the session expired.
	ErrSessionExpired = errors.New("zkcoord: session expired")
	// ErrSessionClosed: the Session was closed by its owner.
	ErrSessionClosed = errors.New("zkcoord: session closed")
	// ErrAuthFailed: the server rejected the session's credentials.
	ErrAuthFailed = errors.New("zkcoord: authentication failed")
)

// Errors returned by Session operations and helpers.
var (
	// ErrInvalidConfig wraps every Config validation failure.
	ErrInvalidConfig = errors.New("zkcoord: invalid config")
	// ErrInvalidPath wraps every path validation failure.
	ErrInvalidPath = errors.New("zkcoord: invalid path")
	// ErrTooLarge: a value exceeds Config.MaxDataSize, or a reply exceeds
	// the 16 MiB the Session accepts (a listing of a huge directory).
	ErrTooLarge = errors.New("zkcoord: value too large")
	// ErrNotOwner: a guarded write found the owner's node gone or changed.
	ErrNotOwner = errors.New("zkcoord: not the owner")
	// ErrNilSession: a recipe was given a nil *Session.
	ErrNilSession = errors.New("zkcoord: nil Session")
	// ErrBadData: a znode holds data this package cannot decode (corrupt or
	// written by something else).
	ErrBadData = errors.New("zkcoord: unrecognised znode data")
	// ErrOutcomeUnknown: a write's reply was lost, or its context or
	// Session ended while it was in flight, and nothing on the server tells
	// whether it happened: it may have, or (when its context ended with the
	// request in flight) may still. It is never retryable. See
	// Settle.
	ErrOutcomeUnknown = errors.New("zkcoord: outcome unknown")
	// ErrSequenceWrapped: a lock or election directory holds a contender
	// whose sequence number is negative, because the directory's
	// sequence counter wrapped past 2147483647; its contenders no longer
	// sort in creation order, so no lock or leadership is taken there.
	// The contender that finds it deletes its own node; an owner that
	// already holds keeps its ownership. See
	// docs/protocol.md#sequence-numbers-and-their-wrap.
	ErrSequenceWrapped = errors.New("zkcoord: sequence counter wrapped: " +
		"contenders in this directory no longer sort in creation order, so none takes ownership here " +
		"until the directory is made anew with its counter at 0: the server deletes it (a container) " +
		"once every contender has left it, or delete it yourself once it is empty")
)

// ZooKeeper's errors, as the server names them (KeeperException.Code).
// Operations return them wrapped; check with errors.Is.
var (
	ErrNoNode                  error = wire.ErrNoNode
	ErrNodeExists              error = wire.ErrNodeExists
	ErrBadVersion              error = wire.ErrBadVersion
	ErrNotEmpty                error = wire.ErrNotEmpty
	ErrNoAuth                  error = wire.ErrNoAuth
	ErrInvalidACL              error = wire.ErrInvalidACL
	ErrBadArguments            error = wire.ErrBadArguments
	ErrNoChildrenForEphemerals error = wire.ErrNoChildrenForEphemerals
	ErrUnimplemented           error = wire.ErrUnimplemented
	// ErrConnectionClosed: the connection was lost; a request in flight
	// may or may not have taken effect (ZooKeeper's ConnectionLoss).
	ErrConnectionClosed error = wire.ErrConnectionLoss
)

// IsRetryable reports whether err is a connection loss after which an
// idempotent operation may safely be sent again on the same session.
func IsRetryable(err error) bool {
	return errors.Is(err, wire.ErrConnectionLoss) || errors.Is(err, wire.ErrSessionMoved)
}
