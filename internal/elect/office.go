package elect

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/lockdelay"
)

// ErrTermGone: the term node was deleted under a leader.
var ErrTermGone = errors.New("elect: term node deleted")

// ErrTermChanged: someone else bumped the term.
var ErrTermChanged = errors.New("elect: term changed")

// Office is what a leader learns when it takes office.
type Office struct {
	Token   int64 // creation zxid of the leader's node: its fencing token
	Term    int64 // version of the term node after the leader's bump
	Version int32 // the same, as ZooKeeper reports it

	watch *behind // the watches sent right behind the bump, for WatchTerm
}

// behind holds the reads a contender sends right behind its bump: the
// term node with a watch and, if it is not watched yet, its own node with
// a watch. ZooKeeper executes them after the bump, so when the bump
// succeeded they are what WatchTerm would read, a round trip earlier.
type behind struct {
	mu    sync.Mutex
	taken bool

	data   []byte
	st     *zkcoord.Stat
	w      <-chan zkcoord.Event
	err    error
	own    bool // whether the own node was read
	ownOK  bool
	ownSt  *zkcoord.Stat
	ownW   <-chan zkcoord.Event
	ownErr error
}

// reads returns the function that fills b, for Session.MultiThen: the
// test hook first, then the reads together, so that they share one round
// trip and none is sent before the hook returns.
func (b *behind) reads(c *Contender) func(context.Context) {
	return func(ctx context.Context) {
		c.hooks.afterBump(c.node)
		fs := []func(){func() { b.data, b.st, b.w, b.err = c.sess.GetW(ctx, c.lay.TermPath) }}
		if b.own {
			fs = append(fs, func() { b.ownOK, b.ownSt, b.ownW, b.ownErr = c.sess.ExistsW(ctx, c.node) })
		}
		Parallel(fs...)
	}
}

// take hands b to its one user; later calls get nil.
func (b *behind) take() *behind {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.taken {
		return nil
	}
	b.taken = true
	return b
}

// Guard returns the check that makes a transaction fail once the term is
// over: every guarded write of a leader carries it.
func Guard(termPath string, term int64) zkcoord.Op {
	return zkcoord.CheckOp(termPath, int32(term))
}

// Over reports whether the result of a Guard op says the term is over.
func Over(opErr error) bool {
	return errors.Is(opErr, zkcoord.ErrBadVersion) || errors.Is(opErr, zkcoord.ErrNoNode)
}

// readOffice reads the term node and, if asked and the layout has one,
// the leader node, in one round trip.
func (c *Contender) readOffice(ctx context.Context, withLeader bool) officeRead {
	r := officeRead{leaderRead: withLeader && c.lay.LeaderPath != ""}
	reads := []func(){func() { r.termData, r.term, r.termErr = c.sess.Get(ctx, c.lay.TermPath) }}
	if r.leaderRead {
		reads = append(reads, func() {
			var ok bool
			ok, r.leader, r.ackErr = c.sess.Exists(ctx, c.lay.LeaderPath)
			if !ok {
				r.leader = nil
			}
		})
	}
	Parallel(reads...)
	return r
}

// TakeOffice makes the contender, found first by Determine, the leader: it
// checks that its node belongs to this Session, then bumps the term node
// (and creates the leader node) in one transaction that also checks that
// its node still exists. With the term read taken by Determine, that is
// one round trip. The leader node is not read first: its last holder
// deletes it when it resigns and ZooKeeper when its session ends, so it is
// almost always gone; when the create finds it, it is read and replaced in
// a second attempt. Errors: ErrMissing, zkcoord.ErrNotOwner, the layout's
// Refuse error, or a ZooKeeper error.
func (c *Contender) TakeOffice(ctx context.Context, p Place) (Office, error) {
	if c.own.EphemeralOwner != c.sess.ID() {
		return Office{}, fmt.Errorf("elect: %w: lowest node %s belongs to session 0x%x, not 0x%x",
			zkcoord.ErrNotOwner, c.node, c.own.EphemeralOwner, c.sess.ID())
	}
	termData := c.lay.TermData(c.node, c.own.Czxid)
	rd := p.office
	if waited, err := c.hold(ctx); err != nil {
		return Office{}, err
	} else if waited {
		rd = nil // read again: the term may have moved meanwhile
	}
	withLeader := false
	for {
		if cause := context.Cause(ctx); cause != nil {
			return Office{}, cause
		}
		if rd == nil {
			r := c.readOffice(bg(ctx), withLeader)
			rd = &r
		}
		if err := c.checkOffice(bg(ctx), rd); err != nil {
			if errors.Is(err, errAgain) {
				rd = nil
				continue
			}
			return Office{}, err
		}
		off, err := c.bump(bg(ctx), rd, termData)
		switch {
		case errors.Is(err, errLeaderExists):
			withLeader = true
			fallthrough
		case errors.Is(err, errAgain):
			rd = nil
			continue
		}
		return off, err
	}
}

// errLeaderExists: the leader node exists; read it and replace it.
var errLeaderExists = errors.New("elect: leader node exists")

// errAgain: the reads are stale (a node changed or was just created):
// read again and retry.
var errAgain = errors.New("elect: look again")

// checkOffice vets the reads taken before the bump, creating a missing
// term node (then errAgain).
func (c *Contender) checkOffice(ctx context.Context, rd *officeRead) error {
	switch {
	case errors.Is(rd.termErr, zkcoord.ErrNoNode):
		if err := c.ensureParents(ctx); err != nil {
			return err
		}
		_, err := c.sess.Create(ctx, c.lay.TermPath, nil, zkcoord.FlagPersistent)
		if err != nil && !errors.Is(err, zkcoord.ErrNodeExists) && !zkcoord.IsRetryable(err) {
			return err
		}
		return errAgain
	case rd.termErr != nil:
		return rd.termErr
	case rd.ackErr != nil:
		return rd.ackErr
	}
	return c.lay.refuse(rd.termData)
}

// bump runs the transaction that takes office: check the own node, set
// the term at the version read, replace the leader node.
func (c *Contender) bump(ctx context.Context, rd *officeRead, termData []byte) (Office, error) {
	token := c.own.Czxid
	ops := []zkcoord.Op{
		zkcoord.CheckOp(c.node, -1),
		zkcoord.SetOp(c.lay.TermPath, termData, rd.term.Version),
	}
	if c.lay.LeaderPath != "" {
		if rd.leaderRead && rd.leader != nil {
			ops = append(ops, zkcoord.DeleteOp(c.lay.LeaderPath, rd.leader.Version))
		}
		ack := c.lay.LeaderData(c.node, token, int64(rd.term.Version)+1)
		ops = append(ops, zkcoord.CreateOp(c.lay.LeaderPath, ack, zkcoord.FlagEphemeral))
	}
	// Another election's leader node, created and deleted at once: the
	// transaction fails while that election has a leader in office.
	excl := len(ops)
	for _, p := range c.lay.Exclude {
		ops = append(ops, zkcoord.CreateOp(p, nil, zkcoord.FlagEphemeral), zkcoord.DeleteOp(p, -1))
	}
	w := &behind{own: c.ownW == nil}
	res, err := c.sess.MultiThen(ctx, ops, w.reads(c))
	for i, p := range c.lay.Exclude {
		if k := excl + 2*i; err != nil && k < len(res) && errors.Is(res[k].Error, zkcoord.ErrNodeExists) {
			return Office{}, c.lay.Excluded(p)
		}
	}
	switch {
	case err == nil:
		v := res[1].Stat.Version
		return Office{Token: token, Term: int64(v), Version: v, watch: w}, nil
	case zkcoord.IsRetryable(err):
		// The reply is lost. Settle syncs, so that a transaction cut off
		// by the reconnection is visible or never applied, and reads the
		// term node. The transaction set it from the version read to the
		// next, with term data that names this contender's node (Layout's
		// contract), which no other contender writes: the node of that
		// incarnation (Czxid) one version on holding exactly termData is
		// this bump. Anything else (the old version, other data, a later
		// version, the node gone or created again) takes no office: look
		// again, and bump again if this contender still leads.
		found, serr := zkcoord.Settle(ctx, c.sess, zkcoord.Write{
			Kind: zkcoord.WriteSet, Path: c.lay.TermPath, Data: termData,
			Version: rd.term.Version, Czxid: rd.term.Czxid, Sole: true,
		}, err)
		switch {
		case found.Done:
			v := found.Stat.Version
			return Office{Token: token, Term: int64(v), Version: v}, nil
		case serr != nil && c.sess.Err() != nil:
			return Office{}, serr // the Session ended: no office to take
		}
		return Office{}, errAgain
	case len(res) > 0 && res[0].Error != nil && errors.Is(res[0].Error, zkcoord.ErrNoNode):
		return Office{}, ErrMissing
	case errors.Is(err, zkcoord.ErrNoNode):
		// The term node vanished, or the leader node's parent is missing.
		if err := c.ensureParents(ctx); err != nil {
			return Office{}, err
		}
		return Office{}, errAgain
	case errors.Is(err, zkcoord.ErrNodeExists) && !rd.leaderRead:
		return Office{}, errLeaderExists
	case errors.Is(err, zkcoord.ErrBadVersion) || errors.Is(err, zkcoord.ErrNodeExists):
		// Someone changed the term or leader node in between.
		return Office{}, errAgain
	}
	return Office{}, err
}

// ensureParents creates the parents of the term and leader nodes.
func (c *Contender) ensureParents(ctx context.Context) error {
	for _, p := range []string{c.lay.TermPath, c.lay.LeaderPath} {
		if p == "" {
			continue
		}
		if err := c.sess.EnsurePath(ctx, zkcoord.Parent(p)); err != nil {
			return err
		}
	}
	return nil
}

// WatchTerm watches the term node after TakeOffice, and the contender's
// node (NodeChanged) if it is not watched yet, in one round trip, or none
// when TakeOffice sent these reads right behind its transaction: the
// returned channel fires when anyone else bumps or deletes the term. It
// fails with ErrTermGone, with ErrTermChanged and the term's data when the
// term is already over, and with ErrMissing when the node is gone.
func (c *Contender) WatchTerm(ctx context.Context, off Office) (<-chan zkcoord.Event, []byte, error) {
	var (
		data   []byte
		st     *zkcoord.Stat
		w      <-chan zkcoord.Event
		err    error
		ownErr error
	)
	if r := off.watch.take(); r != nil && r.err == nil && (!r.own || r.ownErr == nil) {
		// Read right behind the bump: no round trip of its own.
		data, st, w = r.data, r.st, r.w
		if r.own {
			ownErr = c.ownRead(r.ownOK, r.ownSt, r.ownW)
		}
	} else {
		reads := []func(){func() { data, st, w, err = c.sess.GetW(bg(ctx), c.lay.TermPath) }}
		if c.ownW == nil {
			reads = append(reads, func() { ownErr = c.readOwn(bg(ctx), true) })
		}
		Parallel(reads...)
	}
	switch {
	case errors.Is(err, zkcoord.ErrNoNode):
		return nil, nil, ErrTermGone
	case err != nil:
		return nil, nil, err
	case st.Version != off.Version:
		return nil, data, ErrTermChanged
	case ownErr != nil:
		return nil, nil, ownErr
	}
	return w, data, nil
}

// CheckOffice is a leader's periodic re-check, in case the notification of
// its deposition or of its node's deletion was lost: it reads the term and
// the contender's node in one round trip. It fails as WatchTerm does.
func (c *Contender) CheckOffice(ctx context.Context, off Office) ([]byte, error) {
	var (
		data            []byte
		st              *zkcoord.Stat
		err             error
		ok              bool
		ownErr, termErr error
	)
	Parallel(
		func() { data, st, termErr = c.sess.Get(bg(ctx), c.lay.TermPath) },
		func() { ok, _, ownErr = c.sess.Exists(bg(ctx), c.node) },
	)
	switch {
	case errors.Is(termErr, zkcoord.ErrNoNode):
		err = ErrTermGone
	case termErr != nil:
		err = termErr
	case st.Version != off.Version:
		err = ErrTermChanged
	case ownErr != nil:
		err = ownErr
	case !ok:
		err = ErrMissing
	}
	return data, err
}

// Leave deletes the leader node, if the leader's term is still the current
// one, together with the contender's node. The term check is the guard:
// every later leader replaces the leader node in the transaction that
// bumps the term, so while the term is unchanged the leader node is this
// contender's.
func (c *Contender) Leave(ctx context.Context, off Office) error {
	if c.lay.LeaderPath == "" {
		return c.deleteOwn(ctx)
	}
	leave := func(ops ...zkcoord.Op) error {
		return c.sess.Retry(ctx, func(ctx context.Context) error {
			_, err := c.sess.Multi(ctx, ops...)
			return err
		})
	}
	check, delAck := Guard(c.lay.TermPath, off.Term), zkcoord.DeleteOp(c.lay.LeaderPath, -1)
	ops := []zkcoord.Op{check, delAck, zkcoord.DeleteOp(c.node, -1)}
	if c.delay != nil {
		ops = append(ops, lockdelay.Mark(c.node))
	}
	if leave(ops...) == nil {
		return nil
	}
	// A later term, or the leader node or the contender's node already
	// gone (possibly by the attempt above, its reply lost): delete the
	// leader node if the term is still ours, then the contender's node.
	if err := leave(check, delAck); err != nil && c.sess.Err() == nil {
		c.sess.Logger().Debug("elect: leader node not deleted", "path", c.lay.LeaderPath, "err", err)
	}
	return c.deleteOwn(ctx)
}
