package election

import "errors"

// Errors reported by elections, candidates and leaderships. Causes of loss
// are wrapped, so check them with errors.Is.
var (
	// ErrInvalidID: a participant id is empty, too long or not UTF-8.
	ErrInvalidID = errors.New("election: invalid participant id")
	// ErrInvalidValue: a value to advertise (WithValue, Proclaim) is not
	// UTF-8.
	ErrInvalidValue = errors.New("election: invalid value")
	// ErrEnded: the election was ended (Election.End); candidates are
	// finished and no new ones can join.
	ErrEnded = errors.New("election: election ended")
	// ErrResigned: the candidate resigned.
	ErrResigned = errors.New("election: resigned")
	// ErrLost: leadership or candidacy ended because the Session ended
	// (Lost, Expired or Closed). The Session's error is wrapped as well, so
	// errors.Is(err, zkcoord.ErrSessionLost) tells a local loss declaration.
	ErrLost = errors.New("election: session ended")
	// ErrDeposed: another candidate bumped the term node while this one
	// led, so this one stepped down.
	ErrDeposed = errors.New("election: deposed by a newer term")
	// ErrNodeDeleted: the candidate's node was deleted by someone else.
	ErrNodeDeleted = errors.New("election: candidate node deleted")
	// ErrOtherElection: another election shares this one's path the other
	// way and leads: a plain election at P and a failover group at P
	// (whose election is at P/lock) would otherwise lead at once. See the
	// package failover.
	ErrOtherElection = errors.New("election: another election leads on the same path")
	// ErrNoLeader: the election has no participant at the moment.
	ErrNoLeader = errors.New("election: no leader")
)
