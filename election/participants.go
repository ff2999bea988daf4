package election

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
	"github.com/zkcoord/zkcoord/internal/fanout"
)

// Participant describes one participant of an election, as anyone can see
// it, candidate or not.
type Participant struct {
	// ID is the participant id (the data of its node) and Node the path
	// of its node.
	ID   string
	Node string
	// Session is the ZooKeeper session that owns the node, and Token the
	// node's creation zxid: the fencing token it leads with.
	Session int64
	Token   int64
	// Created is when the node was created, by the server's clock.
	Created time.Time
	// Leader is set on the first participant, which leads (or is about to).
	Leader bool
	// Acting is set on the leader when it took office: the leader node
	// names it (see Leader.Acting).
	Acting bool
	// Value is what the acting leader advertises (see Leader.Value).
	Value string
}

// maxParallelReads bounds the reads Participants keeps in flight at once.
const maxParallelReads = 64

// Participants lists the participants in election order, the leader
// first. The nodes are read together (their requests share round trips);
// a participant that leaves while they are read is left out, so the list
// is a snapshot that may mix moments of a changing election.
func (e *Election) Participants(ctx context.Context) ([]Participant, error) {
	ps, err := elect.DetachValue(ctx, e.participants)
	if err != nil {
		return nil, fmt.Errorf("election: participants of %s: %w", e.path, err)
	}
	return ps, nil
}

func (e *Election) participants(ctx context.Context) ([]Participant, error) {
	var (
		children        []string
		ack             []byte
		listErr, ackErr error
	)
	elect.Parallel(
		func() { children, _, listErr = e.sess.Children(ctx, e.path) },
		func() { ack, _, ackErr = e.sess.Get(ctx, e.opts.ackPath) },
	)
	switch {
	case errors.Is(listErr, zkcoord.ErrNoNode):
		return []Participant{}, nil
	case listErr != nil:
		return nil, listErr
	case ackErr != nil && !errors.Is(ackErr, zkcoord.ErrNoNode):
		return nil, ackErr
	}
	sorted, _ := participants(children)
	found, err := e.readParticipants(ctx, sorted)
	if err != nil {
		return nil, err
	}
	out := make([]Participant, 0, len(found))
	for _, p := range found {
		if p != nil {
			out = append(out, *p)
		}
	}
	if len(out) > 0 {
		out[0].Leader = true
		if r, err := decodeAck(ack); len(ack) > 0 && err == nil && r.Node == out[0].Node && r.Token == out[0].Token {
			out[0].Acting, out[0].Value = true, r.Value
		}
	}
	return out, nil
}

// readParticipants reads the nodes named in sorted, concurrently; a node
// gone meanwhile gives nil.
func (e *Election) readParticipants(ctx context.Context, sorted []string) ([]*Participant, error) {
	found := make([]*Participant, len(sorted))
	errs := make([]error, len(sorted))
	fanout.Each(len(sorted), maxParallelReads, func(i int) {
		node := zkcoord.Join(e.path, sorted[i])
		data, st, err := e.sess.Get(ctx, node)
		switch {
		case errors.Is(err, zkcoord.ErrNoNode):
		case err != nil:
			errs[i] = err
		default:
			found[i] = &Participant{ID: string(data), Node: node, Session: st.EphemeralOwner,
				Token: st.Czxid, Created: time.UnixMilli(st.Ctime)}
		}
	})
	return found, errors.Join(errs...)
}
