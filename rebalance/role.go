package rebalance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/elect"
)

// role runs the election and, on the elected client, the coordinator. One
// goroutine owns it; rebalancings run in their own goroutine and report
// back.
type role struct {
	c    *Client
	sess *zkcoord.Session
	lay  layout
	reg  registration
	opts options
	log  *slog.Logger
	// weights remembers the clients' weights for the coordinator's
	// rebalancings.
	weights *weightCache

	done chan struct{}
	err  error
}

func newRole(c *Client, sess *zkcoord.Session, reg registration) *role {
	return &role{c: c, sess: sess, lay: c.lay, reg: reg, opts: c.opts, weights: &weightCache{},
		log: c.log.With("group", c.lay.base, "client", reg.id), done: make(chan struct{})}
}

func (r *role) run(ctx context.Context) {
	defer close(r.done)
	r.err = r.elect(ctx)
	if r.err != nil && ctx.Err() == nil {
		r.log.Info("rebalance: role ended", "err", r.err)
	}
}

// elect is the follower state: the election engine (internal/elect) finds
// this client's place among the client nodes and watches only its
// predecessor, re-reading all children whenever that one changes or the
// periodic re-check finds it gone, until this client is the first and
// becomes coordinator.
func (r *role) elect(ctx context.Context) error {
	lay := r.lay.election()
	con := elect.New(r.sess, &lay, r.reg.path, elect.Config{Recheck: r.opts.recheck, WatchOwn: true, Hooks: r.opts.hooks})
	for {
		p, err := con.Determine(ctx)
		if err != nil {
			return r.classify(ctx, err)
		}
		if p.Leads() {
			return r.coordinate(ctx, con, p)
		}
		r.c.setState(Follower)
		if _, err := con.Wait(ctx, p); err != nil {
			return r.classify(ctx, err)
		}
	}
}

// classify turns a failed read into the role's exit error.
func (r *role) classify(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case r.sess.Err() != nil:
		return r.sess.Err()
	case errors.Is(err, elect.ErrMissing):
		return fmt.Errorf("%w: %s", ErrMembershipLost, r.reg.path)
	case errors.Is(err, zkcoord.ErrNoNode):
		return fmt.Errorf("%w: %w", ErrInconsistent, err)
	}
	return err
}

func indexOf(ms []memberNode, id string) int {
	for i, m := range ms {
		if m.id == id {
			return i
		}
	}
	return -1
}
