package twophase

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Participant is one site of a transaction.
type Participant struct {
	sess    *zkcoord.Session
	t       tx
	site    string
	sites   []string
	payload []byte
	opts    options
}

// Join makes this process the given site of the transaction at path: it
// creates the site's ephemeral node and marks the site joined, atomically.
// It fails with ErrNoTransaction, ErrUnknownSite, or ErrJoined if the site
// has joined before (in this or another process).
func Join(ctx context.Context, sess *zkcoord.Session, path, site string, opts ...Option) (*Participant, error) {
	if err := recipe.Validate(sess, path); err != nil {
		return nil, fmt.Errorf("twophase: %w", err)
	}
	t := tx(path)
	sites, err := readSites(ctx, sess, t)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(sites, site) {
		return nil, fmt.Errorf("%w: %q in %s", ErrUnknownSite, site, path)
	}
	payload, _, err := sess.Get(ctx, path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s", ErrNoTransaction, path)
	}
	if err != nil {
		return nil, fmt.Errorf("twophase: %w", err)
	}
	p := &Participant{sess: sess, t: t, site: site, sites: sites, payload: payload}
	for _, o := range opts {
		o(&p.opts)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("twophase: join %s: %w", path, err) // not sent
		}
		_, err := sess.Multi(ctx,
			zkcoord.CreateOp(t.alive(site), []byte{}, zkcoord.FlagEphemeral),
			zkcoord.SetOp(t.vote(site), []byte(voteJoined), 0))
		switch {
		case err == nil:
			return p, nil
		case errors.Is(err, zkcoord.ErrNoNode):
			return nil, fmt.Errorf("%w: %s", ErrNoTransaction, path)
		case errors.Is(err, zkcoord.ErrNodeExists), errors.Is(err, zkcoord.ErrBadVersion):
			return nil, fmt.Errorf("%w: site %s of %s", ErrJoined, site, path)
		}
		// Did our join happen? Our ephemeral node says so.
		lostReply(err)
		found, err := zkcoord.Settle(ctx, sess, zkcoord.Write{Kind: zkcoord.WriteCreate, Path: t.alive(site), Data: []byte{}, Flags: zkcoord.FlagEphemeral}, err)
		switch {
		case err != nil:
			return nil, fmt.Errorf("twophase: join %s: %w", path, err)
		case found.Done:
			return p, nil
		case found.Stat != nil:
			return nil, fmt.Errorf("%w: site %s of %s", ErrJoined, site, path)
		}
		// Not joined: send it again.
	}
}

// Site returns this participant's site.
func (p *Participant) Site() string { return p.site }

// Path returns the transaction's path.
func (p *Participant) Path() string { return string(p.t) }

// Payload returns the transaction's payload, as given to Begin.
func (p *Participant) Payload() []byte { return p.payload }

// Vote records this site's vote. It fails with ErrVoted if the site has
// voted already. A vote to abort also writes the abort decision at once.
func (p *Participant) Vote(ctx context.Context, commit bool) error {
	vote := voteAbort
	if commit {
		vote = voteCommit
	}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("twophase: vote in %s: %w", p.t, err) // not sent
		}
		_, err := p.sess.Multi(ctx,
			zkcoord.CheckOp(p.t.alive(p.site), -1),
			zkcoord.SetOp(p.t.vote(p.site), []byte(vote), 1))
		switch {
		case err == nil:
		case errors.Is(err, zkcoord.ErrBadVersion):
			return fmt.Errorf("%w: site %s of %s", ErrVoted, p.site, p.t)
		case errors.Is(err, zkcoord.ErrNoNode):
			if serr := p.sess.Err(); serr != nil {
				return serr
			}
			return fmt.Errorf("%w: %s, or site %s's node is gone", ErrNoTransaction, p.t, p.site)
		default:
			// Did our vote happen? Only this site, joined through this
			// Session, moves its vote from version 1 to 2: a vote at version
			// 2 equal to ours is ours.
			lostReply(err)
			found, err := zkcoord.Settle(ctx, p.sess, zkcoord.Write{Kind: zkcoord.WriteSet, Path: p.t.vote(p.site), Data: []byte(vote), Version: 1, Sole: true}, err)
			switch {
			case err != nil:
				return fmt.Errorf("twophase: vote in %s: %w", p.t, err)
			case !found.Done && found.Stat.Version <= 1:
				continue // it did not happen: send it again
			case !found.Done:
				return fmt.Errorf("%w: site %s of %s", ErrVoted, p.site, p.t)
			}
		}
		if !commit {
			_, err := decide(ctx, p.sess, p.t, Outcome{Reason: fmt.Sprintf("site %s voted abort", p.site)}, p.sites)
			return err
		}
		return nil
	}
}

// Outcome waits for the decision and returns it. With WithSitesDecide, this
// participant watches the votes and decides itself; otherwise it waits for
// the coordinator's decision and aborts the transaction if the coordinator
// vanishes first.
func (p *Participant) Outcome(ctx context.Context) (Outcome, error) {
	if p.opts.sitesDecide {
		return evaluate(ctx, p.sess, p.t, p.sites)
	}
	for {
		o, decided, dw, err := readDecision(ctx, p.sess, p.t, true)
		if err != nil {
			return Outcome{}, err
		}
		if decided {
			return o, nil
		}
		_, _, cw, err := p.sess.GetW(ctx, p.t.coordinator())
		if errors.Is(err, zkcoord.ErrNoNode) {
			return decide(ctx, p.sess, p.t, Outcome{Reason: "coordinator vanished"}, p.sites)
		}
		if err != nil {
			return Outcome{}, fmt.Errorf("twophase: %w", err)
		}
		select {
		case <-dw:
		case <-cw:
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		case <-p.sess.Done():
			return Outcome{}, p.sess.Err()
		}
	}
}

// Close aborts the transaction if it is still undecided, then deletes this
// site's ephemeral node.
func (p *Participant) Close(ctx context.Context) error {
	_, decided, _, err := readDecision(ctx, p.sess, p.t, false)
	if err != nil && !errors.Is(err, ErrNoTransaction) {
		return err
	}
	if err == nil && !decided {
		if _, err := decide(ctx, p.sess, p.t, Outcome{Reason: fmt.Sprintf("site %s left", p.site)}, p.sites); err != nil {
			return err
		}
	}
	err = recipe.EnsureDeleted(ctx, p.sess, p.t.alive(p.site))
	if err != nil {
		return fmt.Errorf("twophase: close %s: %w", p.t, err)
	}
	return nil
}

// testHookOutcomeUnknown, if set, runs when a write fails with a
// connection loss, before its outcome is looked up.
var testHookOutcomeUnknown func()

// lostReply runs the test hook if err is a connection loss.
func lostReply(err error) {
	if zkcoord.IsRetryable(err) && testHookOutcomeUnknown != nil {
		testHookOutcomeUnknown()
	}
}
