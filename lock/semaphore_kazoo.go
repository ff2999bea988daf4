package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/internal/seq"
)

// WithKazooLayout makes a Semaphore use the node layout of Kazoo's
// Semaphore recipe instead of Curator's, so that it shares its leases with
// Kazoo clients: the semaphore node path stores the limit as decimal text,
// each lease is an ephemeral child <path>/<32 hex digits> holding the
// lease's data, and acquirers take turns through the Kazoo Lock
// <path>-__lock__ (nodes named ..__lock__<seq>, which Kazoo's Lock
// recognises). Every child of path counts as a lease, as Kazoo counts
// them. Acquisitions create the semaphore node with the limit if it is
// missing, and fail with an error wrapping ErrLimitMismatch if it stores
// another limit than MaxLeases (Kazoo raises its ValueError then). Only a
// Semaphore takes this option, and not together with WithLimitFrom.
func WithKazooLayout() Option {
	return func(o *options) { o.kazoo = true }
}

// ErrLimitMismatch: a Semaphore in Kazoo's layout found its semaphore node
// storing another number of leases than its own.
var ErrLimitMismatch = errors.New("lock: the semaphore node stores another limit")

// kazooLeaseName is how Kazoo's Semaphore names a lease: uuid4().hex.
func kazooLeaseName() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }

// kazooLeaseContender recognises a lease of Kazoo's Semaphore: a child of
// the semaphore node named by 32 lowercase hex digits.
func kazooLeaseContender(name string) (contender, bool) {
	if len(name) != 32 || strings.Trim(name, "0123456789abcdef") != "" {
		return contender{}, false
	}
	return contender{Keyed: seq.Keyed{Name: name, Key: name}}, true
}

// kazooLimit parses the limit that Kazoo's Semaphore stores in its node,
// as Kazoo parses it (int() of the text, surrounding spaces allowed).
func kazooLimit(data []byte) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return n, err == nil
}

// checkKazooLimit makes sure the semaphore node exists and stores the
// Semaphore's limit, creating it with the limit if it is missing. Like
// Kazoo it accepts a node whose data is not a number.
func (s *Semaphore) checkKazooLimit(ctx context.Context) error {
	for {
		data, _, err := s.sess.Get(ctx, s.path)
		if errors.Is(err, zkcoord.ErrNoNode) {
			err = recipe.EnsureNode(ctx, s.sess, s.path, []byte(strconv.Itoa(s.max)), zkcoord.FlagPersistent)
			if err == nil {
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("lock: semaphore %s: %w", s.path, err)
		}
		if n, ok := kazooLimit(data); ok && n != s.max {
			return fmt.Errorf("lock: semaphore %s: %w: %d leases stored, %d given", s.path, ErrLimitMismatch, n, s.max)
		}
		return nil
	}
}

// acquireKazoo is acquire in Kazoo's layout: with the limit checked (by
// tryAcquire already with try), it takes the acquirers' lock, waits until
// n more children fit under the limit and creates them. Unlike Curator's,
// a waiting acquirer has no lease node.
func (s *Semaphore) acquireKazoo(ctx context.Context, n int, try bool) ([]*Lease, error) {
	if !try {
		if err := s.checkKazooLimit(ctx); err != nil {
			return nil, err
		}
	}
	guard, err := s.guard(ctx, try)
	if err != nil {
		return nil, err
	}
	defer guard.releaseAsync()
	first, watch := true, false
	for {
		children, _, cw, err := recipe.Read(ctx, s.path, watch, s.sess.Children, s.sess.ChildrenW)
		if err != nil {
			return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, err)
		}
		if first {
			first = false
			if err := s.leases.refuseOtherKind(ctx, children); err != nil {
				return nil, err
			}
		}
		if len(children)+n <= s.max {
			if err := guard.Err(); err != nil {
				return nil, fmt.Errorf("lock: semaphore %s: mutex: %w", s.path, err)
			}
			return s.createKazooLeases(ctx, n)
		}
		if try {
			return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, ErrNoLease)
		}
		if !watch {
			watch = true
			continue
		}
		select {
		case <-cw:
		case <-guard.Done():
			return nil, fmt.Errorf("lock: semaphore %s: mutex: %w", s.path, guard.Err())
		case <-ctx.Done():
			return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, ctx.Err())
		case <-s.sess.Done():
			return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, s.sess.Err())
		}
	}
}

// createKazooLeases creates n lease nodes, their requests in flight
// together. Their names are random, so a create repeated after a lost
// reply that finds its node has succeeded. On failure the nodes are
// deleted (in the background) and none returned.
func (s *Semaphore) createKazooLeases(ctx context.Context, n int) ([]*Lease, error) {
	nodes := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		nodes[i] = zkcoord.Join(s.path, kazooLeaseName())
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = recipe.EnsureNode(ctx, s.sess, nodes[i], s.leases.data, zkcoord.FlagEphemeral)
		}()
	}
	wg.Wait()
	if failed := slices.IndexFunc(errs, func(err error) bool { return err != nil }); failed >= 0 {
		// A failed create's node may exist too: its outcome is unknown.
		for _, node := range nodes {
			deleteNow(ctx, s.sess, node)
		}
		return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, errs[failed])
	}
	leases := make([]*Lease, n)
	for i, node := range nodes {
		leases[i] = newLease(s.sess, node, nil, false)
	}
	return leases, nil
}

// refuseKazooNode returns ErrOtherKind if the semaphore node stores a
// number, as Kazoo's Semaphore stores its limit there: Kazoo would count
// the subdirectories locks/ and leases/ of Curator's layout as two leases
// it can never get back while they exist.
func (s *Semaphore) refuseKazooNode(ctx context.Context) error {
	data, _, err := s.sess.Get(ctx, s.path)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock: semaphore %s: %w", s.path, err)
	}
	if _, ok := kazooLimit(data); ok {
		return fmt.Errorf("lock: %s: %w: a %s cannot be taken in a %s's node, which stores its limit %q",
			s.path, ErrOtherKind, semaphoreKind, kazooSemaphoreKind, data)
	}
	return nil
}

// dropEmptyDirs deletes the subdirectories of Curator's layout that a
// refused acquirer leaves, if they are empty, rather than leave them to
// the server's periodic removal of empty containers: Kazoo's Semaphore
// counts them as leases while they exist. An acquirer that creates its
// node in one meanwhile creates it again.
func (s *Semaphore) dropEmptyDirs(ctx context.Context) {
	for _, d := range semaphoreDirs {
		// Fails, harmlessly, if the directory has children or is gone.
		_ = s.sess.Delete(ctx, zkcoord.Join(s.path, d.name), -1)
	}
}
