package election

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
)

// Proclaim replaces the value this leader advertises, as etcd's Proclaim
// does: observers read it in Leader.Value (Leader, Observe, `zkcoord
// leader`). The value is kept in the leader node (<path>-leader), beside
// the leader's id, node, token and term, and replaces the one given with
// WithValue or proclaimed before.
//
// The write is fenced by this leadership: one transaction checks that the
// leader's node still exists and that its term is still the current one,
// then writes the leader node. A leader that resigned, was deposed, lost
// its node or its Session is refused with an error wrapping
// zkcoord.ErrNotOwner, and its value is not written; so is one whose Done
// is already closed, without asking the server.
//
// The value must be UTF-8 (ErrInvalidValue) and, with the rest of the
// leader node's data, fit Config.MaxDataSize (zkcoord.ErrTooLarge).
// Proclaims of one leadership are written one at a time, in the order they
// were called. A reply lost with the connection is settled by reading the
// leader node, which only this leader writes during its term. If ctx ends
// before the outcome is known, Proclaim returns an error wrapping
// zkcoord.ErrOutcomeUnknown, and the write settles in the background: the
// leader node then holds either value.
func (l *Leadership) Proclaim(ctx context.Context, value string) error {
	e := l.c.el
	if err := e.opts.validateValue(e.sess, e.path, value); err != nil {
		return fmt.Errorf("election: proclaim in %s: %w", e.path, err)
	}
	select {
	case l.proclaiming <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("election: proclaim in %s: %w", e.path, ctx.Err())
	}
	if err := l.Err(); err != nil {
		<-l.proclaiming
		return fmt.Errorf("election: proclaim in %s: %w: the leadership ended: %w", e.path, zkcoord.ErrNotOwner, err)
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-l.proclaiming }()
		done <- l.proclaim(value)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("election: proclaim in %s: %w: %w", e.path, zkcoord.ErrOutcomeUnknown, ctx.Err())
	}
}

// maxProclaimAttempts bounds the attempts of a Proclaim that finds the
// leader node changed by someone else.
const maxProclaimAttempts = 3

// proclaim writes the leader node with value, fenced by the leader's node
// and term. It runs while holding the proclaiming turn, so it owns
// ackVersion.
func (l *Leadership) proclaim(value string) error {
	e := l.c.el
	data := e.leaderData(l.c.node, l.token, l.term, value)
	notOwner := func(why string) error {
		return fmt.Errorf("election: proclaim in %s: %w: %s", e.path, zkcoord.ErrNotOwner, why)
	}
	for attempt := 1; ; attempt++ {
		if l.ackVersion < 0 {
			v, err := l.readAckVersion()
			if err != nil && e.sess.Err() != nil {
				return notOwner(fmt.Sprintf("the Session ended (%v)", e.sess.Err()))
			}
			if err != nil {
				return fmt.Errorf("election: proclaim in %s: %w", e.path, err)
			}
			l.ackVersion = v
		}
		ops := []zkcoord.Op{
			l.Fence().Check(),
			elect.Guard(e.opts.termPath, l.term),
			zkcoord.SetOp(e.opts.ackPath, data, l.ackVersion),
		}
		res, err := e.sess.Multi(bg, ops...)
		switch {
		case err == nil:
			l.ackVersion = res[2].Stat.Version
			return nil
		case zkcoord.IsRetryable(err):
			// While the term is this leader's, only this leader writes the
			// leader node, one Proclaim at a time: the node one version
			// on holding exactly data is this write.
			found, serr := zkcoord.Settle(bg, e.sess, zkcoord.Write{
				Kind: zkcoord.WriteSet, Path: e.opts.ackPath, Data: data, Version: l.ackVersion, Sole: true,
			}, err)
			switch {
			case found.Done:
				l.ackVersion = found.Stat.Version
				return nil
			case serr != nil:
				l.ackVersion = -1
				if e.sess.Err() != nil {
					return notOwner(fmt.Sprintf("the Session ended (%v)", e.sess.Err()))
				}
				return fmt.Errorf("election: proclaim in %s: %w", e.path, serr)
			}
			continue // not written: send it again
		case e.sess.Err() != nil:
			return notOwner(fmt.Sprintf("the Session ended (%v)", e.sess.Err()))
		case len(res) < 3:
			return fmt.Errorf("election: proclaim in %s: %w", e.path, err)
		case res[0].Error != nil:
			return notOwner(fmt.Sprintf("the leader's node %s is gone", l.c.node))
		case res[1].Error != nil && elect.Over(res[1].Error):
			return notOwner(fmt.Sprintf("term %d is over", l.term))
		case errors.Is(res[2].Error, zkcoord.ErrBadVersion) && attempt < maxProclaimAttempts:
			// Written by another client meanwhile: read its version.
			l.ackVersion = -1
			continue
		}
		return fmt.Errorf("election: proclaim in %s: leader node %s: %w", e.path, e.opts.ackPath, err)
	}
}

// readAckVersion reads the version of the leader node, which must name
// this leader.
func (l *Leadership) readAckVersion() (int32, error) {
	e := l.c.el
	data, st, err := e.sess.Get(bg, e.opts.ackPath)
	if err != nil {
		return 0, fmt.Errorf("leader node %s: %w", e.opts.ackPath, err)
	}
	if r, err := decodeAck(data); err != nil || r.Node != l.c.node || r.Token != l.token {
		return 0, fmt.Errorf("%w: the leader node %s names another leader", zkcoord.ErrNotOwner, e.opts.ackPath)
	}
	return st.Version, nil
}
