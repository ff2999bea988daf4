package election

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
)

// The term node (persistent) counts leaderships: every new leader bumps its
// version and watches it, and steps down if anyone else bumps it. Its data
// names the leader that bumped it last, or says that the election ended.
//
// The leader node (ephemeral, owned by the leader's session) acknowledges
// that the leader took office, so that observers can tell a leader that
// took office from one that merely holds the lowest node. It is replaced in
// the same transaction that bumps the term; there is no separate step, so
// it says nothing about the application's work (see the package
// documentation).

// termRecord is the JSON data of the term node.
type termRecord struct {
	ID      string `json:"id,omitempty"`
	Node    string `json:"node,omitempty"`
	Token   int64  `json:"token,omitempty"`
	Session string `json:"session,omitempty"`
	Ended   bool   `json:"ended,omitempty"`
}

// ackRecord is the JSON data of the leader node.
type ackRecord struct {
	ID    string `json:"id"`
	Node  string `json:"node"`
	Token int64  `json:"token"`
	Term  int64  `json:"term"`
}

func decodeTerm(data []byte) (termRecord, error) {
	var r termRecord
	if len(data) == 0 {
		return r, nil
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return termRecord{}, fmt.Errorf("%w: term node: %v", zkcoord.ErrBadData, err)
	}
	return r, nil
}

func decodeAck(data []byte) (ackRecord, error) {
	var r ackRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return ackRecord{}, fmt.Errorf("%w: leader node: %v", zkcoord.ErrBadData, err)
	}
	return r, nil
}

// ended reports whether the term node says the election ended. A missing
// or unreadable term node does not end anything.
func (e *Election) isEnded(ctx context.Context) (bool, error) {
	data, _, err := e.sess.Get(ctx, e.opts.termPath)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r, err := decodeTerm(data)
	return err == nil && r.Ended, nil
}

// office is what a leader learns when it takes office.
type office struct {
	token   int64 // creation zxid of the candidate's node
	term    int64 // version of the term node after our bump
	version int32 // same, as ZooKeeper reports it
}

// takeOffice checks that the candidate's node is owned by this session,
// then bumps the term node and writes the leader node in one transaction
// that also checks that the node still exists. Independent reads are sent
// together, so that taking office costs three round trips.
func (c *Candidate) takeOffice(ctx context.Context) (office, error) {
	e := c.el
	var (
		own      *zkcoord.Stat
		ownOK    bool
		ownErr   error
		termData []byte
	)
	for first := true; ; first = false {
		if cause := context.Cause(c.runCtx); cause != nil {
			return office{}, cause
		}
		var (
			data            []byte
			stat, ackStat   *zkcoord.Stat
			ackOK           bool
			termErr, ackErr error
		)
		parallel(
			func() { data, stat, termErr = e.sess.Get(ctx, e.opts.termPath) },
			func() { ackOK, ackStat, ackErr = e.sess.Exists(ctx, e.opts.ackPath) },
			func() {
				if first {
					ownOK, own, ownErr = e.sess.Exists(ctx, c.node)
				}
			},
		)
		if first {
			switch {
			case ownErr != nil:
				return office{}, ownErr
			case !ownOK:
				return office{}, errNodeMissing
			case own.EphemeralOwner != e.sess.ID():
				return office{}, fmt.Errorf("election: %w: lowest node %s belongs to session 0x%x, not 0x%x",
					zkcoord.ErrNotOwner, c.node, own.EphemeralOwner, e.sess.ID())
			}
			rec := termRecord{ID: e.opts.id, Node: c.node, Token: own.Czxid, Session: fmt.Sprintf("0x%x", e.sess.ID())}
			termData, _ = json.Marshal(rec)
		}
		switch {
		case errors.Is(termErr, zkcoord.ErrNoNode):
			if err := c.ensureParents(ctx); err != nil {
				return office{}, err
			}
			_, err := e.sess.Create(ctx, e.opts.termPath, nil, zkcoord.FlagPersistent)
			if err != nil && !errors.Is(err, zkcoord.ErrNodeExists) && !zkcoord.IsRetryable(err) {
				return office{}, err
			}
			continue
		case termErr != nil:
			return office{}, termErr
		case ackErr != nil:
			return office{}, ackErr
		}
		if r, err := decodeTerm(data); err == nil && r.Ended {
			return office{}, ErrEnded
		}
		term := int64(stat.Version) + 1
		ack, _ := json.Marshal(ackRecord{ID: e.opts.id, Node: c.node, Token: own.Czxid, Term: term})
		ops := []any{
			zkcoord.CheckOp(c.node, -1),
			zkcoord.SetOp(e.opts.termPath, termData, stat.Version),
		}
		if ackOK {
			ops = append(ops, zkcoord.DeleteOp(e.opts.ackPath, ackStat.Version))
		}
		ops = append(ops, zkcoord.CreateOp(e.opts.ackPath, ack, zkcoord.FlagEphemeral))
		res, err := e.sess.Multi(ctx, ops...)
		switch {
		case err == nil:
			v := res[1].Stat.Version
			return office{token: own.Czxid, term: int64(v), version: v}, nil
		case zkcoord.IsRetryable(err):
			// The outcome is unknown: the term node's data tells.
			data, stat, gerr := e.sess.Get(ctx, e.opts.termPath)
			if gerr == nil && string(data) == string(termData) {
				return office{token: own.Czxid, term: int64(stat.Version), version: stat.Version}, nil
			}
			if gerr != nil && !errors.Is(gerr, zkcoord.ErrNoNode) {
				return office{}, gerr
			}
		case len(res) > 0 && res[0].Error != nil && errors.Is(res[0].Error, zkcoord.ErrNoNode):
			return office{}, errNodeMissing
		case errors.Is(err, zkcoord.ErrNoNode):
			// The term node vanished, or the leader node's parent is missing.
			if err := c.ensureParents(ctx); err != nil {
				return office{}, err
			}
		case errors.Is(err, zkcoord.ErrBadVersion) || errors.Is(err, zkcoord.ErrNodeExists):
			// Someone changed the term or leader node in between: look again.
		default:
			return office{}, err
		}
	}
}

// parallel runs fs concurrently and waits for all of them.
func parallel(fs ...func()) {
	var wg sync.WaitGroup
	wg.Add(len(fs) - 1)
	for _, f := range fs[1:] {
		go func() {
			defer wg.Done()
			f()
		}()
	}
	fs[0]()
	wg.Wait()
}

// ensureParents creates the parents of the term and leader nodes.
func (c *Candidate) ensureParents(ctx context.Context) error {
	e := c.el
	for _, p := range []string{e.opts.termPath, e.opts.ackPath} {
		if err := e.sess.EnsurePath(ctx, zkcoord.Parent(p)); err != nil {
			return err
		}
	}
	return nil
}

// errNodeMissing: the candidate's own node is gone; missing() tells why.
var errNodeMissing = errors.New("election: own node missing")

// leaveOffice deletes the leader node, if this leader's term is still the
// current one, together with the candidate's node. The term check is the
// guard: every later leader replaces the leader node in the transaction
// that bumps the term, so while the term is unchanged the leader node is
// this candidate's.
func (c *Candidate) leaveOffice(ctx context.Context, termVersion int32) error {
	e := c.el
	leave := func(ops ...any) error {
		return e.sess.Retry(ctx, func(ctx context.Context) error {
			_, err := e.sess.Multi(ctx, ops...)
			return err
		})
	}
	check, delAck := zkcoord.CheckOp(e.opts.termPath, termVersion), zkcoord.DeleteOp(e.opts.ackPath, -1)
	if leave(check, delAck, zkcoord.DeleteOp(c.node, -1)) == nil {
		return nil
	}
	// A later term, or the leader node or the candidate's node already
	// gone (possibly by the attempt above, its reply lost): delete the
	// leader node if the term is still ours, then the candidate's node.
	if err := leave(check, delAck); err != nil && e.sess.Err() == nil {
		e.opts.logger.Debug("election: leader node not deleted", "path", e.opts.ackPath, "err", err)
	}
	return c.deleteNode(ctx)
}

// deleteNode deletes the candidate's node; a node already gone is fine.
func (c *Candidate) deleteNode(ctx context.Context) error {
	return c.el.sess.Retry(ctx, func(ctx context.Context) error {
		err := c.el.sess.Delete(ctx, c.node, -1)
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil
		}
		return err
	})
}
