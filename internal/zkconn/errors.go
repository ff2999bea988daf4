package zkconn

import (
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// The errors of a call. A call fails with exactly one of these outcomes
// beside the server's own codes (wire.Code values such as wire.ErrNoNode):
//
//   - ErrNotSent: the request was never written. It did nothing; it may be
//     issued again. It wraps the reason: the caller's context, a
//     connection loss (wire.ErrConnectionLoss), the client's end.
//   - ErrOutcomeUnknown: the caller's context ended after the request was
//     written and before its reply. The request may still take effect.
//   - wire.ErrConnectionLoss without ErrNotSent: the connection broke
//     while the request was written or in flight; it may have taken effect.
//
// wire.ErrSessionExpired, wire.ErrAuthFailed and ErrClosed end the client.
var (
	// ErrNotSent is wrapped by the error of a call whose request was never
	// written on any connection.
	ErrNotSent = errors.New("zkconn: request not sent")
	// ErrOutcomeUnknown is wrapped by the error of a call whose context
	// ended after its request was written, before its reply arrived.
	ErrOutcomeUnknown = errors.New("zkconn: request sent, outcome unknown")
	// ErrClosed is the end of a client closed with Close.
	ErrClosed = errors.New("zkconn: client closed")
	// ErrNoServer is wrapped by Dial's error when no server could be
	// reached before its context ended.
	ErrNoServer = errors.New("zkconn: no server reachable")
)

// connLoss wraps a network or protocol error as a connection loss, so that
// no raw socket error reaches a caller.
func connLoss(err error) error {
	if errors.Is(err, wire.ErrConnectionLoss) {
		return err
	}
	return fmt.Errorf("%w: %w", wire.ErrConnectionLoss, err)
}

// notSent marks err as the reason a request was never written.
func notSent(err error) error {
	return fmt.Errorf("%w: %w", ErrNotSent, err)
}
