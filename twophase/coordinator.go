package twophase

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Option configures Begin or Join.
type Option func(*options)

type options struct {
	payload     []byte
	sitesDecide bool
}

// WithPayload stores the transaction (whatever the sites need to know to
// vote) in the transaction node, for Begin. Participants read it with
// Participant.Payload.
func WithPayload(b []byte) Option { return func(o *options) { o.payload = b } }

// WithSitesDecide makes a participant (Join) watch every vote and decide by
// itself, as in the basic recipe, instead of waiting for the coordinator.
func WithSitesDecide() Option { return func(o *options) { o.sitesDecide = true } }

// Coordinator is the process that started a transaction.
type Coordinator struct {
	sess  *zkcoord.Session
	t     tx
	sites []string
}

// Begin starts a transaction at path among the given sites: it creates the
// transaction node and its children in one multi-operation (missing parents
// are created as containers). It fails with ErrExists if path exists.
func Begin(ctx context.Context, sess *zkcoord.Session, path string, sites []string, opts ...Option) (*Coordinator, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("twophase: %w", err)
	}
	if err := checkSites(sites); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.payload == nil {
		o.payload = []byte{}
	}
	t := tx(path)
	ops := []zkcoord.Op{
		zkcoord.CreateOp(path, o.payload, zkcoord.FlagPersistent),
		zkcoord.CreateOp(t.sites(), []byte(strings.Join(sites, "\n")), zkcoord.FlagPersistent),
		zkcoord.CreateOp(t.alives(), []byte{}, zkcoord.FlagPersistent),
		zkcoord.CreateOp(t.decision(), []byte{}, zkcoord.FlagPersistent),
		zkcoord.CreateOp(t.coordinator(), []byte{}, zkcoord.FlagEphemeral),
	}
	for _, s := range sites {
		ops = append(ops, zkcoord.CreateOp(t.vote(s), []byte{}, zkcoord.FlagPersistent))
	}
	c := &Coordinator{sess: sess, t: t, sites: slices.Clone(sites)}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("twophase: begin %s: %w", path, err) // not sent
		}
		_, err := sess.Multi(ctx, ops...)
		switch {
		case err == nil:
			return c, nil
		case errors.Is(err, zkcoord.ErrNodeExists):
			return nil, fmt.Errorf("%w: %s", ErrExists, path)
		case errors.Is(err, zkcoord.ErrNoNode):
			if err := sess.EnsureContainers(ctx, zkcoord.Parent(path)); err != nil {
				return nil, fmt.Errorf("twophase: begin %s: %w", path, err)
			}
		default:
			// Did our multi happen? Our ephemeral coordinator node says so.
			lostReply(err)
			found, err := zkcoord.Settle(ctx, sess, zkcoord.Write{Kind: zkcoord.WriteCreate, Path: t.coordinator(), Data: []byte{}, Flags: zkcoord.FlagEphemeral}, err)
			switch {
			case err != nil:
				return nil, fmt.Errorf("twophase: begin %s: %w", path, err)
			case found.Done:
				return c, nil
			}
			// Not ours: send it again (ErrExists if another's).
		}
	}
}

// Path returns the transaction's path, to hand to the sites.
func (c *Coordinator) Path() string { return string(c.t) }

// Sites returns the sites of the transaction.
func (c *Coordinator) Sites() []string { return slices.Clone(c.sites) }

// Outcome watches the votes and the sites, writes the decision as soon as
// it follows from them, and returns it. Unless every site decides for
// itself (WithSitesDecide), the decision is made here: call Outcome. If ctx
// ends first the transaction stays undecided; call Abort to end it.
func (c *Coordinator) Outcome(ctx context.Context) (Outcome, error) {
	return evaluate(ctx, c.sess, c.t, c.sites)
}

// Abort decides abort, unless a decision is already written, and returns
// the outcome that stands.
func (c *Coordinator) Abort(ctx context.Context, reason string) (Outcome, error) {
	return decide(ctx, c.sess, c.t, Outcome{Reason: reason}, c.sites)
}

// Close aborts the transaction if it is still undecided, then deletes the
// coordinator's ephemeral node. The transaction's nodes remain, with the
// outcome, until Remove.
func (c *Coordinator) Close(ctx context.Context) error {
	if _, err := c.Abort(ctx, "coordinator closed"); err != nil && !errors.Is(err, ErrNoTransaction) {
		return err
	}
	err := recipe.EnsureDeleted(ctx, c.sess, c.t.coordinator())
	if err != nil {
		return fmt.Errorf("twophase: close %s: %w", c.t, err)
	}
	return nil
}
