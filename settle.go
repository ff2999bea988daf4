package zkcoord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// Write describes a write for Settle: what it did, to which node, and what
// its sender knew of that node.
type Write struct {
	// Kind is WriteCreate, WriteSet or WriteDelete.
	Kind WriteKind
	Path string
	// Data is what a create or set wrote.
	Data []byte
	// Flags are a create's flags.
	Flags int32
	// Version is the version a set or delete expected (-1: any).
	Version int32
	// Czxid is the czxid of the node a set or delete meant, 0 if not
	// known. Given, it tells that node from one deleted and created again
	// at the same path, which a version alone cannot.
	Czxid int64
	// Sole says that only this Session can move the node from Version to
	// the next version (for example because an ephemeral node of the
	// Session guards the write): then a node one version on holding Data
	// is this write's doing.
	Sole bool
}

// WriteKind is the kind of a Write.
type WriteKind int

// Kinds of Write.
const (
	WriteCreate WriteKind = iota + 1
	WriteSet
	WriteDelete
)

// Settled is what Settle found: the write surely happened (Done) or surely
// did not, and the node as read afterwards (Stat nil: there is none; never
// for a set, which Settle calls unknown when its node is gone).
type Settled struct {
	Done bool
	Data []byte
	Stat *Stat
}

// Settle finds out whether w, a write sent on sess that failed with err,
// happened. It uses only the Session's own calls (Sync, Get, ID).
//
// After a connection loss (IsRetryable(err)) Settle makes the server catch
// up with the leader (Sync), so that the read it takes next sees the write
// if it was applied (a request cut off by a reconnection is either applied
// before the Sync completes or never), reads the node, and decides from
// what is there only when that is exact:
//
//   - create: no node means not done; so does a node that is someone
//     else's: an ephemeral node of another Session, or a node holding
//     other data at version 0. An ephemeral node of this Session means
//     done. (A create cannot name the node it meant: a delete racing the
//     create can hide that it happened.)
//   - set at a version: the node still at Version, or one version on with
//     other data than Data, means not done; one version on with Data and
//     Sole means done.
//   - delete: no node, or a node with another czxid than Czxid, means the
//     node meant is gone (done); the node meant still there means not done.
//
// Anything else fails with an error wrapping ErrOutcomeUnknown: in
// particular a node one version on holding exactly the data written,
// without Sole, since another writer may have written the same bytes from
// the same version, and a node at a later version, or gone, or created
// again (Czxid). Equal data never proves that a write was this one's.
//
// A write whose ctx or Session ended while it was in flight fails at once
// with an error wrapping ErrOutcomeUnknown and the cause: nothing can be
// read then, and the request may still be applied. Any other err is
// returned as it is: the write surely failed. An error of Settle's own
// reads (its ctx ended, the Session ended) is returned wrapping
// ErrOutcomeUnknown too. An ErrOutcomeUnknown is never retryable.
func Settle(ctx context.Context, sess *Session, w Write, err error) (Settled, error) {
	what := fmt.Sprintf("%s %s", w.Kind, w.Path)
	switch {
	case err == nil:
		return Settled{Done: true}, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrSessionLost), errors.Is(err, ErrSessionExpired), errors.Is(err, ErrSessionClosed):
		return Settled{}, fmt.Errorf("%w: %s: %w", ErrOutcomeUnknown, what, err)
	case !IsRetryable(err):
		return Settled{}, err
	}
	if serr := sess.Sync(ctx, w.Path); serr != nil && !errors.Is(serr, ErrNoNode) {
		return Settled{}, fmt.Errorf("%w: %s: reply lost (%v), then: %w", ErrOutcomeUnknown, what, err, serr)
	}
	data, st, gerr := sess.Get(ctx, w.Path)
	if gerr != nil && !errors.Is(gerr, ErrNoNode) {
		return Settled{}, fmt.Errorf("%w: %s: reply lost (%v), then: %w", ErrOutcomeUnknown, what, err, gerr)
	}
	if gerr != nil {
		data, st = nil, nil
	}
	found := Settled{Data: data, Stat: st}
	done, why := settle(w, data, st, sess.ID())
	switch done {
	case verdictDone:
		found.Done = true
		return found, nil
	case verdictNotDone:
		return found, nil
	}
	return found, fmt.Errorf("%w: %s: reply lost (%v) and %s", ErrOutcomeUnknown, what, err, why)
}

// verdict is settle's decision.
type verdict int

const (
	verdictUnknown verdict = iota
	verdictDone
	verdictNotDone
)

// settle decides a lost write's outcome from the node found afterwards
// (st nil: none), by the rules of Settle; why says what left it unknown.
func settle(w Write, data []byte, st *Stat, self int64) (verdict, string) {
	switch w.Kind {
	case WriteCreate:
		switch {
		case st == nil:
			return verdictNotDone, ""
		case w.Flags&FlagEphemeral != 0 && st.EphemeralOwner == self:
			return verdictDone, ""
		case w.Flags&FlagEphemeral != 0:
			return verdictNotDone, ""
		case st.Version == 0 && !bytes.Equal(data, w.Data):
			return verdictNotDone, ""
		case st.Version == 0:
			return verdictUnknown, "the node holds what the create wrote, which another create may have written too"
		}
		return verdictUnknown, fmt.Sprintf("the node is at version %d", st.Version)
	case WriteSet:
		switch {
		case w.Version < 0:
			return verdictUnknown, "the set was at any version"
		case st == nil:
			return verdictUnknown, "the node is gone"
		case w.Czxid != 0 && st.Czxid != w.Czxid:
			return verdictUnknown, "the node was deleted and created again"
		case st.Version <= w.Version:
			return verdictNotDone, ""
		case st.Version == w.Version+1 && !bytes.Equal(data, w.Data):
			return verdictNotDone, ""
		case st.Version == w.Version+1 && w.Sole:
			return verdictDone, ""
		case st.Version == w.Version+1:
			return verdictUnknown, fmt.Sprintf("version %d holds what the set wrote, which another writer may have written too", st.Version)
		}
		return verdictUnknown, fmt.Sprintf("the node is at version %d", st.Version)
	case WriteDelete:
		switch {
		case st == nil, w.Czxid != 0 && st.Czxid != w.Czxid:
			return verdictDone, ""
		}
		return verdictNotDone, ""
	}
	return verdictUnknown, "the kind of write is unknown"
}

func (k WriteKind) String() string {
	switch k {
	case WriteCreate:
		return "create"
	case WriteSet:
		return "set"
	case WriteDelete:
		return "delete"
	}
	return fmt.Sprintf("write(%d)", int(k))
}
