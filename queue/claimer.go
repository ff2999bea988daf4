package queue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// claimer claims the children of one node (entries) for a consumer by
// creating ephemeral markers of the same names under another (taken): the
// engine of WorkQueue (Kazoo's LockingQueue) and of the Curator queues'
// lock-safe mode (their lock path), which share one protocol. See the
// package documentation for the claim's guarantees.
type claimer struct {
	sess    *zkcoord.Session
	path    string // the queue's, for errors
	entries string
	taken   string
	// ensureDirs creates the nodes a claim transaction found missing.
	ensureDirs func(ctx context.Context) error
}

// newTag returns the data of a new claim's markers: the consumer's session
// id and an id unique to the claim, so that a consumer tells its own claim
// from every other, those of its own other goroutines included. Kazoo
// writes its consumer's id there and only compares it with its own, so it
// sees these as other consumers' claims; Curator never reads its locks.
func (q *claimer) newTag() []byte {
	return fmt.Appendf(nil, "%016x-%s", q.sess.ID(), strings.ReplaceAll(uuid.NewString(), "-", ""))
}

// testHookClaimUnknown runs when a claim transaction has lost its reply
// (tests only).
var testHookClaimUnknown func()

// claim tries to claim the entries names, in one transaction, and returns
// the claims it got, in order: none, without error, when other consumers
// have them all, or they are gone.
func (q *claimer) claim(ctx context.Context, names []string) ([]*Claim, error) {
	lost := 0
	for len(names) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("queue: take from %s: %w", q.path, err)
		}
		tag := q.newTag()
		a, err := q.send(ctx, names, tag)
		if err != nil {
			return nil, err
		}
		switch a.outcome {
		case ours:
			return q.read(ctx, names, tag)
		case theirs:
			names = names[1:] // another consumer's; try the others again
			continue
		case nobodys:
			if a.err == nil {
				continue // not applied; try again
			}
		}
		if i, ferr := failed(a.res); len(a.res) == len(names) && ferr != nil {
			// Nothing was created; the first failing create says why.
			switch {
			case errors.Is(ferr, zkcoord.ErrNodeExists):
				// Another consumer's. After a second one, another batch has
				// probably claimed many: leave out every entry claimed now
				// (one listing of the claims) rather than fail once per entry.
				names = slices.Delete(slices.Clone(names), i, i+1)
				if lost++; lost > 1 {
					taken, _, err := q.sess.Children(ctx, q.taken)
					if err != nil {
						return nil, fmt.Errorf("queue: list %s: %w", q.taken, err)
					}
					names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(taken, n) })
				}
				continue
			case errors.Is(ferr, zkcoord.ErrNoNode):
				if err := q.ensureDirs(ctx); err != nil {
					return nil, err
				}
				continue
			}
		}
		return nil, fmt.Errorf("queue: claim %s: %w", names[0], a.err)
	}
	return nil, nil
}

// attempt is the settled outcome of one claim transaction: ours (it
// committed), theirs (it did not, and another consumer holds the first
// entry) or nobodys (it did not: the transaction's error and results say
// why, or, with no error, its reply was lost and nothing was applied).
type attempt struct {
	outcome outcome
	res     []zkcoord.MultiResponse
	err     error
}

// send sends one claim transaction and settles its outcome. Once sent, the
// transaction may commit whatever becomes of ctx, so its outcome is
// awaited for as long as the Session lives: if ctx ends first, send
// returns ctx's error at once and leaves the outcome to a goroutine that
// gives the claims back should they turn out to exist. No claim outlives
// a Take that returned an error.
func (q *claimer) send(ctx context.Context, names []string, tag []byte) (attempt, error) {
	if brokenClaim() {
		// The claim as it was before claims were settled, its failure made
		// certain rather than left to timing: a take with a deadline whose
		// claim committed returns the deadline's error once it passes, and
		// keeps nothing, as when the deadline passed while the claim was in
		// flight. The claims stay, by nobody.
		a := q.attempt(context.WithoutCancel(ctx), names, tag)
		if _, hurried := ctx.Deadline(); hurried && a.outcome == ours {
			<-ctx.Done()
			return attempt{}, fmt.Errorf("queue: take from %s: %w", q.path, ctx.Err())
		}
		return a, nil
	}
	done := make(chan attempt, 1)
	go func() { done <- q.attempt(context.WithoutCancel(ctx), names, tag) }()
	select {
	case a := <-done:
		return a, nil
	case <-ctx.Done():
		go func() {
			if a := <-done; a.outcome == ours {
				q.dropAll(names)
			}
		}()
		return attempt{}, fmt.Errorf("queue: take from %s: %w", q.path, ctx.Err())
	}
}

// attempt sends one claim transaction and, if its reply is lost, finds out
// whether it committed.
func (q *claimer) attempt(ctx context.Context, names []string, tag []byte) attempt {
	ops := make([]zkcoord.Op, len(names))
	for i, name := range names {
		ops[i] = zkcoord.CreateOp(zkcoord.Join(q.taken, name), tag, zkcoord.FlagEphemeral)
	}
	res, err := q.sess.Multi(ctx, ops...)
	switch {
	case err == nil:
		return attempt{outcome: ours}
	case !zkcoord.IsRetryable(err):
		return attempt{outcome: nobodys, res: res, err: err}
	}
	if testHookClaimUnknown != nil {
		testHookClaimUnknown()
	}
	// The transaction is all or nothing, so the first marker tells: it
	// holds this claim's tag if and only if the transaction committed.
	marker := zkcoord.Join(q.taken, names[0])
	var o outcome
	err = q.sess.Retry(ctx, func(ctx context.Context) error {
		mine, exists, err := q.holds(ctx, marker, tag)
		switch {
		case err != nil:
			return err
		case mine:
			o = ours
		case exists:
			o = theirs
		default:
			o = nobodys
		}
		return nil
	})
	if err != nil {
		// The Session ended: its markers, if any, went with it.
		return attempt{outcome: nobodys, err: err}
	}
	return attempt{outcome: o}
}

// holds reports whether marker exists and is the claim tagged tag, after a
// sync: the answer decides an outcome, and a server this consumer has
// reconnected to may not yet have applied what another one committed.
func (q *claimer) holds(ctx context.Context, marker string, tag []byte) (mine, exists bool, err error) {
	if err := q.sess.Sync(ctx, q.taken); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return false, false, err
	}
	data, st, err := q.sess.Get(ctx, marker)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return bytes.Equal(data, tag) && st.EphemeralOwner == q.sess.ID(), true, nil
}

// read reads the entries just claimed, with pipelined requests, and returns
// their claims. An entry gone meanwhile was acknowledged by the consumer
// whose claim ours replaced after it ended: its claim is given up.
func (q *claimer) read(ctx context.Context, names []string, tag []byte) ([]*Claim, error) {
	datas := make([][]byte, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			datas[i], _, errs[i] = q.sess.Get(ctx, zkcoord.Join(q.entries, name))
		}()
	}
	wg.Wait()
	var (
		out   []*Claim
		first error
	)
	for i, name := range names {
		switch err := errs[i]; {
		case err == nil && first == nil:
			out = append(out, newClaim(q, name, datas[i], tag))
			continue
		case err != nil && !errors.Is(err, zkcoord.ErrNoNode) && first == nil:
			first = fmt.Errorf("queue: read %s: %w", name, err)
		}
		q.drop(ctx, zkcoord.Join(q.taken, name))
	}
	if first != nil {
		// Give back what this batch claimed: the caller gets an error.
		for _, c := range out {
			q.drop(ctx, c.marker)
			c.end(errReleased)
		}
		return nil, first
	}
	return out, nil
}

// drop deletes a claim marker; failing that, it goes with the Session.
func (q *claimer) drop(ctx context.Context, marker string) {
	if err := recipe.EnsureDeleted(context.WithoutCancel(ctx), q.sess, marker); err != nil {
		q.sess.Logger().Debug("queue: could not delete claim", "path", marker, "err", err)
	}
}

// dropAll gives back the claims of a transaction that committed after its
// Take had returned.
func (q *claimer) dropAll(names []string) {
	for _, name := range names {
		q.drop(q.sess.Context(), zkcoord.Join(q.taken, name))
	}
}
