package zkcoord

import (
	"time"
)

// State is the connection state of a Session as its owner should see it.
type State int

const (
	// Connected: the session was established and is in contact with a server.
	Connected State = iota + 1
	// Suspended: no contact with any server for a while, or the connection
	// dropped. Owned things are still owned, but should not be acted on
	// without care until Reconnected.
	Suspended
	// Reconnected: contact is back, on the same ZooKeeper session.
	Reconnected
	// Lost: no server response for Config.LostAfter of the session timeout.
	// Terminal: the Session is finished.
	Lost
	// Expired: the server said the session expired. Terminal.
	Expired
	// Closed: the Session was closed by its owner (or authentication
	// failed). Terminal.
	Closed
)

var stateNames = [...]string{"", "Connected", "Suspended", "Reconnected", "Lost", "Expired", "Closed"}

func (s State) String() string {
	if s > 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "Unknown"
}

// Terminal reports whether the state ends the Session.
func (s State) Terminal() bool { return s == Lost || s == Expired || s == Closed }

// StateChange is one transition of a Session's state.
type StateChange struct {
	State State
	// At is when the Session made the transition.
	At time.Time
	// Server is the server the session was using, when known.
	Server string
	// Err is the cause of a terminal state (wrapping ErrSessionLost,
	// ErrSessionExpired, ErrSessionClosed or ErrAuthFailed), nil otherwise.
	Err error
}
