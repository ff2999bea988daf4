package twophase

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Outcome is the decision of a transaction.
type Outcome struct {
	// Commit is true if the transaction commits.
	Commit bool
	// Reason says why it aborted.
	Reason string
}

func (o Outcome) String() string {
	if o.Commit {
		return "commit"
	}
	if o.Reason == "" {
		return "abort"
	}
	return "abort: " + o.Reason
}

func (o Outcome) encode() []byte {
	if o.Commit {
		return []byte(voteCommit)
	}
	return []byte(voteAbort + "\n" + o.Reason)
}

// decodeDecision parses the decision node; undecided at version 0.
func decodeDecision(path string, data []byte, st *zkcoord.Stat) (Outcome, bool, error) {
	if st.Version == 0 {
		return Outcome{}, false, nil
	}
	s := string(data)
	switch {
	case s == voteCommit:
		return Outcome{Commit: true}, true, nil
	case s == voteAbort:
		return Outcome{}, true, nil
	case strings.HasPrefix(s, voteAbort+"\n"):
		return Outcome{Reason: s[len(voteAbort)+1:]}, true, nil
	}
	return Outcome{}, false, fmt.Errorf("twophase: decision %s holds %q: %w", path, truncate(s), zkcoord.ErrBadData)
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// readDecision reads the decision, with a watch if watch is set.
func readDecision(ctx context.Context, sess *zkcoord.Session, t tx, watch bool) (Outcome, bool, <-chan zkcoord.Event, error) {
	data, st, w, err := recipe.Read(ctx, t.decision(), watch, sess.Get, sess.GetW)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return Outcome{}, false, nil, fmt.Errorf("%w: %s", ErrNoTransaction, t)
	}
	if err != nil {
		return Outcome{}, false, nil, fmt.Errorf("twophase: %w", err)
	}
	o, ok, err := decodeDecision(t.decision(), data, st)
	return o, ok, w, err
}

// decide writes an outcome unless one is written already, and returns the
// outcome that stands.
func decide(ctx context.Context, sess *zkcoord.Session, t tx, o Outcome, sites []string) (Outcome, error) {
	for {
		var err error
		if o.Commit {
			// Commit only while every site's ephemeral node exists.
			ops := make([]zkcoord.Op, 0, len(sites)+1)
			for _, s := range sites {
				ops = append(ops, zkcoord.CheckOp(t.alive(s), -1))
			}
			ops = append(ops, zkcoord.SetOp(t.decision(), o.encode(), 0))
			var res []zkcoord.MultiResponse
			res, err = sess.Multi(ctx, ops...)
			if err != nil && len(res) == len(ops) {
				for i, s := range sites {
					if errors.Is(res[i].Error, zkcoord.ErrNoNode) {
						o = Outcome{Reason: fmt.Sprintf("site %s vanished", s)}
						err = errTryAgain
					}
				}
			}
		} else {
			_, err = sess.Set(ctx, t.decision(), o.encode(), 0)
		}
		if errors.Is(err, errTryAgain) {
			continue
		}
		if err != nil && !errors.Is(err, zkcoord.ErrBadVersion) && !zkcoord.IsRetryable(err) {
			if errors.Is(err, zkcoord.ErrNoNode) {
				return Outcome{}, fmt.Errorf("%w: %s", ErrNoTransaction, t)
			}
			return Outcome{}, fmt.Errorf("twophase: decide %s: %w", t, err)
		}
		// Written by us or someone else, or unknown after a lost reply: the
		// decision node says which outcome stands.
		var (
			cur     Outcome
			decided bool
		)
		rerr := sess.Retry(ctx, func(ctx context.Context) error {
			var err error
			cur, decided, _, err = readDecision(ctx, sess, t, false)
			return err
		})
		if rerr != nil {
			return Outcome{}, rerr
		}
		if decided {
			return cur, nil
		}
		// Not decided: our write did not happen (lost reply); write again.
	}
}

var errTryAgain = errors.New("try again")

// Lookup reads the outcome of the transaction at path, reporting false if
// it is not decided yet.
func Lookup(ctx context.Context, sess *zkcoord.Session, path string) (Outcome, bool, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return Outcome{}, false, fmt.Errorf("twophase: %w", err)
	}
	o, ok, _, err := readDecision(ctx, sess, tx(path), false)
	return o, ok, err
}
