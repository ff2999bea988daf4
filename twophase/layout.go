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

// Errors of this package.
var (
	// ErrExists: Begin found a node at the transaction path.
	// It wraps zkcoord.ErrNodeExists, the toolkit's one "already exists".
	ErrExists = fmt.Errorf("twophase: transaction: %w", zkcoord.ErrNodeExists)
	// ErrNoTransaction: there is no transaction at the path.
	ErrNoTransaction = errors.New("twophase: no such transaction")
	// ErrUnknownSite: the site is not part of the transaction.
	ErrUnknownSite = errors.New("twophase: unknown site")
	// ErrJoined: the site has already joined (possibly another process).
	ErrJoined = errors.New("twophase: site already joined")
	// ErrVoted: the site has already voted.
	ErrVoted = errors.New("twophase: site already voted")
	// ErrSites: the list of sites given to Begin is empty, has duplicates or
	// invalid names.
	ErrSites = errors.New("twophase: bad site list")
)

// Node names and data.
const (
	sitesNode       = "sites"
	aliveNode       = "alive"
	coordinatorNode = "coordinator"
	decisionNode    = "decision"

	voteJoined = "joined"
	voteCommit = "commit"
	voteAbort  = "abort"
)

// tx names the nodes of one transaction.
type tx string

func (t tx) sites() string           { return zkcoord.Join(string(t), sitesNode) }
func (t tx) vote(site string) string { return zkcoord.Join(string(t), sitesNode, site) }
func (t tx) alives() string          { return zkcoord.Join(string(t), aliveNode) }
func (t tx) alive(site string) string {
	return zkcoord.Join(string(t), aliveNode, site)
}
func (t tx) coordinator() string { return zkcoord.Join(string(t), coordinatorNode) }
func (t tx) decision() string    { return zkcoord.Join(string(t), decisionNode) }

// checkSites validates the site list given to Begin.
func checkSites(sites []string) error {
	if len(sites) == 0 {
		return fmt.Errorf("%w: no sites", ErrSites)
	}
	seen := map[string]bool{}
	for _, s := range sites {
		if err := zkcoord.ValidateName(s); err != nil {
			return fmt.Errorf("%w: %w", ErrSites, err)
		}
		if strings.Contains(s, "\n") {
			return fmt.Errorf("%w: %q has a newline", ErrSites, s)
		}
		if seen[s] {
			return fmt.Errorf("%w: %q twice", ErrSites, s)
		}
		seen[s] = true
	}
	return nil
}

// readSites reads the transaction's site list.
func readSites(ctx context.Context, sess *zkcoord.Session, t tx) ([]string, error) {
	data, _, err := sess.Get(ctx, t.sites())
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s", ErrNoTransaction, t)
	}
	if err != nil {
		return nil, fmt.Errorf("twophase: %w", err)
	}
	sites := strings.Split(string(data), "\n")
	if checkSites(sites) != nil {
		return nil, fmt.Errorf("twophase: site list %s holds %q: %w", t.sites(), truncate(string(data)), zkcoord.ErrBadData)
	}
	return sites, nil
}

// Remove deletes the transaction at path and everything under it. Call it
// once every participant has learnt the outcome; participants still
// waiting fail with ErrNoTransaction.
func Remove(ctx context.Context, sess *zkcoord.Session, path string) error {
	if err := recipe.Validate(sess, path); err != nil {
		return fmt.Errorf("twophase: %w", err)
	}
	if err := removeTree(ctx, sess, path); err != nil {
		return fmt.Errorf("twophase: remove %s: %w", path, err)
	}
	return nil
}

func removeTree(ctx context.Context, sess *zkcoord.Session, path string) error {
	for {
		children, _, err := sess.Children(ctx, path)
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		slices.Sort(children)
		for _, c := range children {
			if err := removeTree(ctx, sess, zkcoord.Join(path, c)); err != nil {
				return err
			}
		}
		err = recipe.EnsureDeleted(ctx, sess, path)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zkcoord.ErrNotEmpty):
			continue // a site joined meanwhile
		}
		return err
	}
}
