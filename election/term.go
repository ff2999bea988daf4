package election

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
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

// ackRecord is the JSON data of the leader node. Value is what the
// leader advertises (WithValue, Leadership.Proclaim); empty, it is left
// out.
type ackRecord struct {
	ID    string `json:"id"`
	Node  string `json:"node"`
	Token int64  `json:"token"`
	Term  int64  `json:"term"`
	Value string `json:"value,omitempty"`
}

// leaderData is the data of the leader node written by the leader whose
// node is node, with fencing token token, in term, advertising value.
func (e *Election) leaderData(node string, token, term int64, value string) []byte {
	data, _ := json.Marshal(ackRecord{ID: e.opts.id, Node: node, Token: token, Term: term, Value: value})
	return data
}

func decodeTerm(data []byte) (termRecord, error) {
	return zkcoord.DecodeJSON[termRecord](data, "term node")
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

// layout is the election's layout for the engine: Curator's LeaderLatch
// participants, ordered as Curator orders them, a term node holding a
// termRecord and a leader node holding an ackRecord. A candidate that
// finds a participant with a negative sequence number neither leads nor
// follows: that order is no longer creation order.
func (e *Election) layout() elect.Layout {
	return elect.Layout{
		Dir: e.path,
		Order: func(children []string) []string {
			sorted, ignored := participants(children)
			if len(ignored) > 0 {
				e.opts.logger.Debug("election: ignoring children that are not participants", "path", e.path, "names", ignored)
			}
			return sorted
		},
		TermPath:   e.opts.termPath,
		LeaderPath: e.opts.ackPath,
		TermData: func(node string, token int64) []byte {
			data, _ := json.Marshal(termRecord{ID: e.opts.id, Node: node, Token: token, Session: fmt.Sprintf("0x%x", e.sess.ID())})
			return data
		},
		LeaderData: func(node string, token, term int64) []byte {
			return e.leaderData(node, token, term, e.opts.value)
		},
		Refuse: func(data []byte) error {
			if r, err := decodeTerm(data); err == nil && r.Ended {
				return ErrEnded
			}
			return nil
		},
		RefuseOrder: func(sorted []string) error {
			if w := wrappedParticipant(sorted); w != "" {
				return fmt.Errorf("participant %s has a negative sequence number: %w", w, zkcoord.ErrSequenceWrapped)
			}
			return nil
		},
		Exclude: e.excluded(),
		Excluded: func(leader string) error {
			return fmt.Errorf("%w: the election whose leader node is %s leads", ErrOtherElection, leader)
		},
	}
}

// excluded returns the leader nodes of the elections that share this
// one's path the other way: a failover group at a path P runs its
// election at P/lock (leader node P/lock-leader), beside which a plain
// election at P (leader node P-leader) would lead at the same time. An
// election at P excludes P/lock-leader; one at P/lock excludes P-leader.
// (Two plain elections at P and P/lock exclude each other too.)
func (e *Election) excluded() []string {
	out := []string{zkcoord.Join(e.path, "lock") + "-leader"}
	if zkcoord.Base(e.path) == "lock" && zkcoord.Parent(e.path) != "/" {
		out = append(out, zkcoord.Parent(e.path)+"-leader")
	}
	return slices.DeleteFunc(out, func(p string) bool { return p == e.opts.ackPath })
}
