package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Test hooks: testHookCommit runs just before a taker sends the multi that
// deletes an item, testHookResolved after a taker has found out the outcome
// of a multi whose reply was lost.
var (
	testHookCommit   func(itemPath string)
	testHookResolved func(outcome)
)

// MaxBatch is the most items one TakeN takes: its transaction holds two
// operations per item, and ZooKeeper refuses requests above a megabyte.
const MaxBatch = 500

// read is one item read before the take: its data and the version the
// delete expects.
type read struct {
	it      item
	data    []byte
	version int32
}

// claimN tries to take the items of batch (in serving order) in one
// transaction, and returns the data of those it took, in order. Items
// another taker got first are skipped; it returns none, without error, if
// it got none of them.
func (q *Queue) claimN(ctx context.Context, batch []item) ([][]byte, error) {
	claims := zkcoord.Join(q.path, claimsNode)
	reads, err := q.readAll(ctx, batch)
	if err != nil {
		return nil, err
	}
	lost := 0
	for len(reads) > 0 {
		first := zkcoord.Join(q.path, reads[0].it.name)
		if testHookCommit != nil {
			testHookCommit(first)
		}
		// From here on the outcome matters more than ctx: the delete may
		// commit, and then the items are ours. Wait for the outcome as long
		// as the Session lives.
		octx := context.WithoutCancel(ctx)
		ops := make([]zkcoord.Op, 0, 2*len(reads))
		for _, r := range reads {
			ops = append(ops,
				zkcoord.DeleteOp(zkcoord.Join(q.path, r.it.name), r.version),
				zkcoord.CreateOp(zkcoord.Join(claims, r.it.name), nil, zkcoord.FlagEphemeral))
		}
		res, err := q.sess.Multi(octx, ops...)
		if err == nil {
			q.dropMarkers(octx, reads)
			return datas(reads), nil
		}
		if i, ferr := failed(res); len(res) == len(ops) && ferr != nil {
			// Nothing was applied; the first failing operation says why.
			switch {
			case i%2 == 0 && isGone(ferr), i%2 == 1 && errors.Is(ferr, zkcoord.ErrNodeExists):
				// Another taker got this item: take the others. After a
				// second such item, another batch has probably taken many:
				// read again what is left rather than fail once per item.
				reads = slices.Delete(reads, i/2, i/2+1)
				if lost++; lost > 1 {
					if reads, err = q.readAll(ctx, itemsOf(reads)); err != nil {
						return nil, err
					}
				}
				continue
			case i%2 == 1 && errors.Is(ferr, zkcoord.ErrNoNode):
				if err := q.sess.EnsureContainers(ctx, claims); err != nil {
					return nil, err
				}
				continue
			}
		}
		if !zkcoord.IsRetryable(err) {
			if q.sess.Err() != nil {
				return nil, fmt.Errorf("%w: %w", ErrOutcomeUnknown, q.sess.Err())
			}
			return nil, err
		}
		// The reply is lost. The transaction is all or nothing, so the
		// first item's marker tells for every item.
		taken, err := q.resolve(octx, first, zkcoord.Join(claims, reads[0].it.name))
		if err != nil {
			return nil, err
		}
		if testHookResolved != nil {
			testHookResolved(taken)
		}
		if taken == ours {
			q.dropMarkers(octx, reads)
			return datas(reads), nil
		}
		// Not applied: read again what is left, and try again.
		if reads, err = q.readAll(ctx, itemsOf(reads)); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// failed returns the first failing operation of a transaction that failed.
func failed(res []zkcoord.MultiResponse) (int, error) {
	for i, r := range res {
		if r.Error != nil {
			return i, r.Error
		}
	}
	return -1, nil
}

// readAll reads the items of batch, in parallel (the connection pipelines
// the requests, so n reads cost about one round trip), and returns those
// that still exist, in order.
func (q *Queue) readAll(ctx context.Context, batch []item) ([]read, error) {
	reads := make([]read, len(batch))
	errs := make([]error, len(batch))
	get := func(i int) {
		data, st, err := q.sess.Get(ctx, zkcoord.Join(q.path, batch[i].name))
		if err == nil {
			reads[i] = read{it: batch[i], data: data, version: st.Version}
		}
		errs[i] = err
	}
	if len(batch) == 1 {
		get(0)
	} else {
		var wg sync.WaitGroup
		for i := range batch {
			wg.Add(1)
			go func() { defer wg.Done(); get(i) }()
		}
		wg.Wait()
	}
	out := reads[:0]
	for i, err := range errs {
		switch {
		case err == nil:
			out = append(out, reads[i])
		case errors.Is(err, zkcoord.ErrNoNode):
			// taken meanwhile
		default:
			return nil, err
		}
	}
	return out, nil
}

func itemsOf(reads []read) []item {
	out := make([]item, len(reads))
	for i, r := range reads {
		out[i] = r.it
	}
	return out
}

func datas(reads []read) [][]byte {
	out := make([][]byte, len(reads))
	for i, r := range reads {
		out[i] = r.data
	}
	return out
}

func isGone(err error) bool {
	return errors.Is(err, zkcoord.ErrNoNode) || errors.Is(err, zkcoord.ErrBadVersion)
}

type outcome int

const (
	nobodys outcome = iota
	ours
	theirs
)

// resolve finds out, after a lost reply, whether our take committed: our
// marker exists if and only if it did.
func (q *Queue) resolve(ctx context.Context, itemPath, marker string) (outcome, error) {
	var o outcome
	err := q.sess.Retry(ctx, func(ctx context.Context) error {
		if err := q.sess.Sync(ctx, q.path); err != nil {
			return err
		}
		ok, st, err := q.sess.Exists(ctx, marker)
		if err != nil {
			return err
		}
		if ok && st.EphemeralOwner == q.sess.ID() {
			o = ours
			return nil
		}
		ok, _, err = q.sess.Exists(ctx, itemPath)
		if err != nil {
			return err
		}
		if ok {
			o = nobodys
		} else {
			o = theirs
		}
		return nil
	})
	if err != nil && q.sess.Err() != nil {
		return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, q.sess.Err())
	}
	return o, err
}

// dropMarkers deletes our markers, in one transaction if there are
// several. Failing that, they go with the Session.
func (q *Queue) dropMarkers(ctx context.Context, reads []read) {
	claims := zkcoord.Join(q.path, claimsNode)
	if len(reads) > 1 {
		ops := make([]zkcoord.Op, len(reads))
		for i, r := range reads {
			ops[i] = zkcoord.DeleteOp(zkcoord.Join(claims, r.it.name), -1)
		}
		if _, err := q.sess.Multi(ctx, ops...); err == nil {
			return
		}
	}
	for _, r := range reads {
		marker := zkcoord.Join(claims, r.it.name)
		if err := recipe.EnsureDeleted(ctx, q.sess, marker); err != nil {
			q.sess.Logger().Debug("queue: could not delete claim marker", "path", marker, "err", err)
		}
	}
}
