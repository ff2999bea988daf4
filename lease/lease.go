package lease

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Kazoo's storage format.
const (
	formatVersion = 1
	timeLayout    = "2006-01-02T15:04:05"
	holderNode    = "lease_holder"
)

// Lease is the outcome of TryAcquire: whether this client obtained the
// lease, and who holds it until when.
type Lease struct {
	// Obtained is true when this client holds the lease now.
	Obtained bool
	// Holder is the id of the client that holds it (this client's own id
	// when Obtained).
	Holder string
	// End is when the lease expires, in UTC, to the second.
	End time.Time
}

// Option configures TryAcquire.
type Option func(*options)

type options struct {
	id  string
	now func() time.Time
}

// WithID sets the holder id; asking again with the same id renews the
// lease. Every client that asks with the same id holds the lease at once,
// so an id must name one holder.
//
// The default names this process: "<host name>:<pid>:<random hex>", the
// same for every call in the process and different in any other, also on
// the same host or with the same pid in another container. A process that
// restarts has a new id and waits for its old lease to expire. (Kazoo's
// NonBlockingLease defaults to the host name alone, so that two Kazoo
// processes on one host both hold a lease; give each Kazoo client an
// identifier of its own.)
func WithID(id string) Option { return func(o *options) { o.id = id } }

// defaultID is the holder id without WithID.
var defaultID = sync.OnceValues(func() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("lease: no id given and no host name: %w", err)
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%x", host, os.Getpid(), b), nil
})

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// record is the holder node's JSON.
type record struct {
	Version int    `json:"version"`
	Holder  string `json:"holder"`
	End     string `json:"end"`
}

// TryAcquire obtains or renews the lease at path for d, without waiting.
// It reports Obtained false, with the current holder and end, when another
// id holds an unexpired lease.
func TryAcquire(ctx context.Context, sess *zkcoord.Session, path string, d time.Duration, opts ...Option) (Lease, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return Lease{}, fmt.Errorf("lease: %w", err)
	}
	o := options{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if o.id == "" {
		id, err := defaultID()
		if err != nil {
			return Lease{}, err
		}
		o.id = id
	}
	if d < time.Second {
		return Lease{}, fmt.Errorf("lease: %w: duration %v is under the format's one-second resolution", zkcoord.ErrInvalidConfig, d)
	}
	if err := sess.EnsurePath(ctx, path); err != nil {
		return Lease{}, fmt.Errorf("lease: %w", err)
	}
	holder := zkcoord.Join(path, holderNode)
	for {
		l, done, err := attempt(ctx, sess, holder, d, o)
		if err != nil {
			return Lease{}, fmt.Errorf("lease: %s: %w", path, err)
		}
		if done {
			return l, nil
		}
	}
}

// attempt reads the holder node and, if the lease is free or ours, replaces
// it. done is false when the node changed under it: read again.
func attempt(ctx context.Context, sess *zkcoord.Session, holder string, d time.Duration, o options) (Lease, bool, error) {
	data, st, err := sess.Get(ctx, holder)
	exists := err == nil
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return Lease{}, false, err
	}
	now := o.now().UTC()
	if exists {
		cur, err := decode(data)
		if err != nil {
			return Lease{}, false, err
		}
		if cur.Version != formatVersion {
			return Lease{Holder: cur.Holder}, true, nil // a newer format: leave it alone, as Kazoo does
		}
		end, _ := time.Parse(timeLayout, cur.End) // decode checked it
		if cur.Holder != o.id && now.Before(end) {
			return Lease{Holder: cur.Holder, End: end}, true, nil
		}
	}
	end := now.Add(d).Truncate(time.Second)
	mine, err := json.Marshal(record{Version: formatVersion, Holder: o.id, End: end.Format(timeLayout)})
	if err != nil {
		return Lease{}, false, err
	}
	if exists {
		_, err = sess.Multi(ctx, zkcoord.DeleteOp(holder, st.Version), zkcoord.CreateOp(holder, mine, zkcoord.FlagPersistent))
	} else {
		_, err = sess.Create(ctx, holder, mine, zkcoord.FlagPersistent)
	}
	switch {
	case err == nil:
		return Lease{Obtained: true, Holder: o.id, End: end}, true, nil
	case errors.Is(err, zkcoord.ErrNodeExists), errors.Is(err, zkcoord.ErrBadVersion), errors.Is(err, zkcoord.ErrNoNode):
		return Lease{}, false, nil // someone else changed it first: look again
	}
	if zkcoord.IsRetryable(err) && testHookOutcomeUnknown != nil {
		testHookOutcomeUnknown()
	}
	// The reply is lost, or ctx or the Session ended with the write in
	// flight. The holder node is persistent and its record says nothing
	// only this call could have written (another call with this id may
	// write the same bytes in the same second), so a node holding exactly
	// our record is no proof. Settle syncs and reads: with no node, or
	// another record, our write did not happen; with our record (or a
	// later version) it may have. Either way the next attempt reads again
	// and decides by the lease's own rules, with a write that checks what
	// it read: a lease held by our id is renewed, so Obtained is only ever
	// reported on a write that surely happened. Only when nothing could
	// be read is the outcome reported as unknown.
	found, serr := zkcoord.Settle(ctx, sess, zkcoord.Write{Kind: zkcoord.WriteCreate, Path: holder, Data: mine, Flags: zkcoord.FlagPersistent}, err)
	if serr != nil && (found.Stat == nil || !errors.Is(serr, zkcoord.ErrOutcomeUnknown)) {
		return Lease{}, false, serr
	}
	return Lease{}, false, nil
}

// testHookOutcomeUnknown, if set, runs when a write fails with a connection
// loss, before its outcome is settled.
var testHookOutcomeUnknown func()

func decode(data []byte) (record, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return record{}, fmt.Errorf("%w: lease holder %q: %v", zkcoord.ErrBadData, data, err)
	}
	if r.Version == formatVersion {
		if _, err := time.Parse(timeLayout, r.End); err != nil {
			return record{}, fmt.Errorf("%w: lease end %q: %v", zkcoord.ErrBadData, r.End, err)
		}
	}
	return r, nil
}
