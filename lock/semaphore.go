package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
)

// Semaphore is a distributed counting semaphore with the node layout and
// rules of Apache Curator's InterProcessSemaphoreV2: at most MaxLeases
// leases are held at once across all clients.
//
// Under path it keeps two directories (in Curator's layout; see
// WithKazooLayout for Kazoo's). An acquirer first takes the mutex
// <path>/locks (a Mutex: _c_<uuid>-lock-<seq> nodes), then creates its
// lease node <path>/leases/_c_<uuid>-lease-<seq> and, still holding the
// mutex, waits until there are at most MaxLeases lease nodes; then it
// releases the mutex and holds its lease until it releases it or loses it.
// Because acquirers take turns, only one client at a time waits for a
// lease to be freed, and a release wakes only that one. AcquireN creates
// its n lease nodes in one turn and waits until they all fit.
//
// Like Curator's, the limit is not stored under path: every client of a
// semaphore must be given the same MaxLeases, or read the limit from one
// shared counter node (WithLimitFrom). Children of leases/ whose
// names are not lease nodes are ignored. Acquire and TryAcquire refuse a
// path that holds the contenders of a Mutex or an RWMutex, with
// ErrOtherKind (see the package documentation); they find out once they
// hold the acquirers' mutex.
//
// Curator's acquire(qty) takes its leases one turn at a time, and between
// two turns holds some leases while others may take the rest: two Curator
// clients acquiring several leases each can deadlock, and so can such a
// Curator client and AcquireN, when together they want more than
// MaxLeases. Between zkcoord clients, AcquireN cannot.
//
// A Semaphore is safe for concurrent use, and one Semaphore value may hold
// several leases.
type Semaphore struct {
	sess      *zkcoord.Session
	path      string
	max       int
	limitFrom string     // the limit's node (WithLimitFrom), or ""
	kazoo     bool       // Kazoo's layout (WithKazooLayout)
	locks     contention // the acquirers' mutex, <path>/locks
	leases    contention // <path>/leases
}

// NewSemaphore returns a Semaphore on path with maxLeases leases.
func NewSemaphore(sess *zkcoord.Session, path string, maxLeases int, opts ...Option) (*Semaphore, error) {
	o := newOptions(opts)
	if err := checkArgs(sess, path, o); err != nil {
		return nil, err
	}
	if err := o.onlyForMutex(semaphoreKind); err != nil {
		return nil, err
	}
	if maxLeases < 1 {
		return nil, fmt.Errorf("lock: semaphore %s: maxLeases %d must be at least 1", path, maxLeases)
	}
	s := &Semaphore{
		sess:      sess,
		path:      path,
		max:       maxLeases,
		limitFrom: o.limitFrom,
		kazoo:     o.kazoo,
		locks:     contention{sess: sess, dir: zkcoord.Join(path, "locks"), name: mutexName, recognise: mutexContender},
		leases:    contention{sess: sess, dir: zkcoord.Join(path, "leases"), name: leaseName, data: o.data, recognise: leaseContender},
	}
	if o.kazoo {
		if o.limitFrom != "" {
			return nil, fmt.Errorf("lock: semaphore %s: %w: WithKazooLayout keeps the limit in the semaphore node, WithLimitFrom elsewhere", path, zkcoord.ErrInvalidConfig)
		}
		s.locks.dir, s.locks.name = path+"-"+kazooName, kazooName
		s.leases.dir, s.leases.recognise, s.leases.kind = path, kazooLeaseContender, kazooSemaphoreKind
	}
	return s, nil
}

// Path returns the semaphore's directory.
func (s *Semaphore) Path() string { return s.path }

// MaxLeases returns the number of leases given to NewSemaphore: the limit,
// or with WithLimitFrom the limit while the limit node is missing (see
// Limit for the current one).
func (s *Semaphore) MaxLeases() int { return s.max }

// Acquire waits until it holds a lease, ctx ends or the Session ends. If it
// fails, it leaves no node behind.
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	leases, err := s.acquire(ctx, 1, false)
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// TryAcquire acquires a lease if one is free and returns ErrNoLease
// otherwise. It never waits for another client: if another acquirer holds
// the acquirers' mutex (<path>/locks) at that moment, because it is waiting
// for a lease or is just taking one, TryAcquire returns ErrNoLease at once,
// as Curator's acquire with a zero wait does.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) {
	leases, err := s.tryAcquire(ctx, 1)
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// AcquireN waits until it holds n leases at once, all or nothing, like
// Curator's acquire(qty) but in one turn: it creates the n lease nodes
// while holding the acquirers' mutex and waits until they all fit, so
// acquirers of several leases never hold some while waiting for the rest,
// and cannot deadlock each other. n must be between 1 and MaxLeases (at
// least 1 with WithLimitFrom, where it waits for a limit of n or more). If
// it fails, it leaves no node behind.
//
// The MultiLease holds the n leases: release them together with its
// Release, or one by one through Leases. Its Done closes as soon as any
// one of them ends.
func (s *Semaphore) AcquireN(ctx context.Context, n int) (*MultiLease, error) {
	if err := s.checkN(n); err != nil {
		return nil, err
	}
	leases, err := s.acquire(ctx, n, false)
	if err != nil {
		return nil, err
	}
	return newMultiLease(leases), nil
}

// TryAcquireN acquires n leases if that many are free and returns
// ErrNoLease otherwise, without waiting, as TryAcquire does.
func (s *Semaphore) TryAcquireN(ctx context.Context, n int) (*MultiLease, error) {
	if err := s.checkN(n); err != nil {
		return nil, err
	}
	leases, err := s.tryAcquire(ctx, n)
	if err != nil {
		return nil, err
	}
	return newMultiLease(leases), nil
}

// checkN refuses a number of leases that could never be held.
func (s *Semaphore) checkN(n int) error {
	if n < 1 || (n > s.max && s.limitFrom == "") {
		return fmt.Errorf("lock: semaphore %s: %w: %d leases asked, between 1 and %d can be held", s.path, ErrBadCount, n, s.max)
	}
	return nil
}

func (s *Semaphore) tryAcquire(ctx context.Context, n int) ([]*Lease, error) {
	// Fail fast without taking the mutex. A client that holds the mutex
	// while waiting for a lease has its own lease nodes counted here.
	if s.kazoo {
		if err := s.checkKazooLimit(ctx); err != nil {
			return nil, err
		}
	}
	held, err := s.count(ctx)
	if err != nil {
		return nil, err
	}
	limit, _, err := s.limit(ctx, false)
	if err != nil {
		return nil, err
	}
	if held+n > limit {
		return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, ErrNoLease)
	}
	return s.acquire(ctx, n, true)
}

// Leases returns the number of lease nodes currently in the semaphore.
func (s *Semaphore) Leases(ctx context.Context) (int, error) { return s.count(ctx) }

func (s *Semaphore) count(ctx context.Context) (int, error) {
	children, _, err := s.sess.Children(ctx, s.leases.dir)
	if errors.Is(err, zkcoord.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("lock: semaphore %s: %w", s.path, err)
	}
	if s.kazoo {
		return len(children), nil // Kazoo counts every child
	}
	return len(sortContenders(children, leaseContender)), nil
}

// guard takes the acquirers' mutex; with try, one held by another
// acquirer is ErrNoLease.
func (s *Semaphore) guard(ctx context.Context, try bool) (*Lease, error) {
	g, err := s.locks.acquire(ctx, try)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, ErrNoLease)
	}
	return g, err
}

// acquire takes the acquirers' mutex, creates n lease nodes and waits for
// them to count. With try it waits for neither the mutex nor the leases.
func (s *Semaphore) acquire(ctx context.Context, n int, try bool) ([]*Lease, error) {
	if s.kazoo {
		return s.acquireKazoo(ctx, n, try)
	}
	guard, err := s.guard(ctx, try)
	if err != nil {
		return nil, err
	}
	defer guard.releaseAsync()
	// The check for other kinds of lock on the path goes out beside the
	// leases' creates: all come after the create of the acquirer's node in
	// locks/, which is what a Mutex or an RWMutex created later finds.
	checked := make(chan error, 1)
	go func() { checked <- s.refuseOtherKind(ctx) }()
	nodes, err := s.createLeases(ctx, n)
	if kerr := <-checked; kerr != nil {
		for _, node := range nodes {
			deleteNow(ctx, s.sess, node)
		}
		if rerr := guard.Release(ctx); rerr != nil {
			s.sess.Logger().Debug("lock: releasing the semaphore's mutex", "path", s.path, "err", rerr)
		}
		s.dropEmptyDirs(ctx)
		return nil, kerr
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %s: %w", s.leases.dir, err)
	}
	leases, err := s.wait(ctx, nodes, guard, try)
	if err != nil {
		// Gone before the acquirers' mutex is released, unless ctx has
		// ended: a lease left behind for a moment would count against the
		// next acquirer.
		for _, node := range nodes {
			deleteNow(ctx, s.sess, node)
		}
		return nil, err
	}
	return leases, nil
}

// createLeases creates n lease nodes, their requests in flight together.
// If ctx ends before a create's outcome is known, CreateProtected deletes
// its node in the background once it turns out to exist. On failure the
// nodes created are deleted and none returned.
func (s *Semaphore) createLeases(ctx context.Context, n int) ([]string, error) {
	nodes := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = s.sess.CreateProtected(ctx, s.leases.dir, leaseName, s.leases.data, zkcoord.FlagEphemeralSequential)
		}()
	}
	wg.Wait()
	failed := slices.IndexFunc(errs, func(err error) bool { return err != nil })
	if failed < 0 {
		return nodes, nil
	}
	for i, node := range nodes {
		if errs[i] == nil {
			deleteNow(ctx, s.sess, node)
		}
	}
	return nil, errs[failed]
}

// refuseOtherKind returns ErrOtherKind if the semaphore's path holds the
// contenders of a Mutex or an RWMutex (see contention.refuseOtherKind).
func (s *Semaphore) refuseOtherKind(ctx context.Context) error {
	if brokenMixedKinds() {
		return nil
	}
	children, st, err := s.sess.Children(ctx, s.path)
	if err != nil {
		return fmt.Errorf("lock: semaphore %s: %w", s.path, err)
	}
	if node, kind := otherKind(children, semaphoreKind); node != "" {
		return otherKindErr(s.path, semaphoreKind, kind, node)
	}
	if st.DataLength > 0 {
		return s.refuseKazooNode(ctx)
	}
	return nil
}

// wait counts the leases, while holding the mutex guard, until there are
// at most the limit, nodes (the acquirer's own) included. Once it waits it
// watches the leases and the limit node (WithLimitFrom).
func (s *Semaphore) wait(ctx context.Context, nodes []string, guard *Lease, try bool) ([]*Lease, error) {
	// The first node is watched while waiting, and its lease gets that
	// watch; a deletion of any of them fires the children watch anyway.
	own := &self{node: nodes[0]}
	watch := false // list without a watch first: a free lease needs none
	for {
		children, _, cw, err := recipe.Read(ctx, s.leases.dir, watch, s.sess.Children, s.sess.ChildrenW)
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil, fmt.Errorf("lock: %s: %w", nodes[0], ErrNodeDeleted)
		}
		if err != nil {
			return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, err)
		}
		limit, lw, err := s.limit(ctx, watch)
		if err != nil {
			return nil, err
		}
		leases := sortContenders(children, leaseContender)
		for _, node := range nodes {
			if _, found := blocker(leases, zkcoord.Base(node)); !found {
				return nil, fmt.Errorf("lock: %s: %w", node, ErrNodeDeleted)
			}
		}
		if len(leases) <= limit {
			if err := guard.Err(); err != nil {
				return nil, fmt.Errorf("lock: semaphore %s: mutex: %w", s.path, err)
			}
			out := []*Lease{own.lease(s.sess, false)}
			for _, node := range nodes[1:] {
				out = append(out, newLease(s.sess, node, nil, false))
			}
			return out, nil
		}
		if try {
			return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, ErrNoLease)
		}
		if !watch {
			watch = true
			own.watchFrom(ctx, s.sess)
			continue
		}
		if err := s.leases.block(ctx, cw, lw, own, guard.Done()); err != nil {
			if guard.ended() {
				return nil, fmt.Errorf("lock: semaphore %s: mutex: %w", s.path, guard.Err())
			}
			return nil, err
		}
	}
}
