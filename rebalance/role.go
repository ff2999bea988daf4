package rebalance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/zkcoord/zkcoord"
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

	done chan struct{}
	err  error
}

func newRole(c *Client, sess *zkcoord.Session, reg registration) *role {
	return &role{c: c, sess: sess, lay: c.lay, reg: reg, opts: c.opts,
		log: c.log.With("group", c.lay.base, "client", reg.id), done: make(chan struct{})}
}

func (r *role) run(ctx context.Context) {
	defer close(r.done)
	r.err = r.elect(ctx)
	if r.err != nil && ctx.Err() == nil {
		r.log.Info("rebalance: role ended", "err", r.err)
	}
}

// elect is the follower state: it finds this client's place among the
// client nodes and watches only its predecessor, re-reading all children
// whenever that one changes, until this client is the lowest and becomes
// coordinator.
func (r *role) elect(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ownLost := r.watchOwn(ctx, &wg)
	for {
		kids, _, err := r.sess.Children(ctx, r.lay.clients())
		if err != nil {
			return r.classify(ctx, err)
		}
		ms := parseClients(kids)
		i := indexOf(ms, r.reg.id)
		if i < 0 {
			return fmt.Errorf("%w: %s is not under %s", ErrMembershipLost, r.reg.id, r.lay.clients())
		}
		if i == 0 {
			return r.coordinate(ctx, ownLost)
		}
		r.c.setState(Follower)
		ok, _, w, err := r.sess.ExistsW(ctx, r.lay.client(ms[i-1].node))
		if err != nil {
			return r.classify(ctx, err)
		}
		if !ok {
			continue
		}
		select {
		case <-w:
		case <-ownLost:
			return fmt.Errorf("%w: %s", ErrMembershipLost, r.reg.path)
		case <-ctx.Done():
			return ctx.Err()
		case <-r.sess.Done():
			return r.sess.Err()
		}
	}
}

// watchOwn returns a channel closed when this client's node is deleted
// while the Session lives (someone removed it: the client must treat that
// as the loss of its membership).
func (r *role) watchOwn(ctx context.Context, wg *sync.WaitGroup) <-chan struct{} {
	lost := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			ok, _, w, err := r.sess.ExistsW(ctx, r.reg.path)
			if err != nil {
				return // ctx or Session ended: reported elsewhere
			}
			if !ok {
				close(lost)
				return
			}
			if waitEvent(ctx, r.sess, w) != nil {
				return
			}
		}
	}()
	return lost
}

// classify turns a failed read into the role's exit error.
func (r *role) classify(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case r.sess.Err() != nil:
		return r.sess.Err()
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
