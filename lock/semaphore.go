package lock

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkcoord/zkcoord"
)

// Semaphore is a distributed counting semaphore with the node layout and
// rules of Apache Curator's InterProcessSemaphoreV2: at most MaxLeases
// leases are held at once across all clients.
//
// Under path it keeps two directories. An acquirer first takes the mutex
// <path>/locks (a Mutex: _c_<uuid>-lock-<seq> nodes), then creates its
// lease node <path>/leases/_c_<uuid>-lease-<seq> and, still holding the
// mutex, waits until there are at most MaxLeases lease nodes; then it
// releases the mutex and holds its lease until it releases it or loses it.
// Because acquirers take turns, only one client at a time waits for a
// lease to be freed, and a release wakes only that one.
//
// Like Curator's, the limit is not stored in ZooKeeper: every client of a
// semaphore must be given the same MaxLeases. Children of leases/ whose
// names are not lease nodes are ignored. Acquire and TryAcquire refuse a
// path that holds the contenders of a Mutex or an RWMutex, with
// ErrOtherKind (see the package documentation); they find out once they
// hold the acquirers' mutex.
//
// A Semaphore is safe for concurrent use, and one Semaphore value may hold
// several leases.
type Semaphore struct {
	sess   *zkcoord.Session
	path   string
	max    int
	locks  contention // the acquirers' mutex, <path>/locks
	leases contention // <path>/leases
}

// NewSemaphore returns a Semaphore on path with maxLeases leases.
func NewSemaphore(sess *zkcoord.Session, path string, maxLeases int, opts ...Option) (*Semaphore, error) {
	o := newOptions(opts)
	if err := checkArgs(sess, path, o); err != nil {
		return nil, err
	}
	if maxLeases < 1 {
		return nil, fmt.Errorf("lock: semaphore %s: maxLeases %d must be at least 1", path, maxLeases)
	}
	locks := zkcoord.Join(path, "locks")
	leases := zkcoord.Join(path, "leases")
	return &Semaphore{
		sess:   sess,
		path:   path,
		max:    maxLeases,
		locks:  contention{sess: sess, dir: locks, name: mutexName, recognise: mutexContender},
		leases: contention{sess: sess, dir: leases, name: leaseName, data: o.data, recognise: leaseContender},
	}, nil
}

// Path returns the semaphore's directory.
func (s *Semaphore) Path() string { return s.path }

// MaxLeases returns the number of leases.
func (s *Semaphore) MaxLeases() int { return s.max }

// Acquire waits until it holds a lease, ctx ends or the Session ends. If it
// fails, it leaves no node behind.
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	return s.acquire(ctx, false)
}

// TryAcquire acquires a lease if one is free and returns ErrNoLease
// otherwise. It never waits for another client: if another acquirer holds
// the acquirers' mutex (<path>/locks) at that moment, because it is waiting
// for a lease or is just taking one, TryAcquire returns ErrNoLease at once,
// as Curator's acquire with a zero wait does.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) {
	// Fail fast without taking the mutex. A client that holds the mutex
	// while waiting for a lease has its own lease node counted here.
	n, err := s.count(ctx)
	if err != nil {
		return nil, err
	}
	if n >= s.max {
		return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, ErrNoLease)
	}
	return s.acquire(ctx, true)
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
	return len(sortContenders(children, leaseContender)), nil
}

// acquire takes the acquirers' mutex, creates a lease node and waits for
// it to count. With try it waits for neither the mutex nor a lease.
func (s *Semaphore) acquire(ctx context.Context, try bool) (*Lease, error) {
	guard, err := s.locks.acquire(ctx, try)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, ErrNoLease)
	}
	if err != nil {
		return nil, err
	}
	defer guard.releaseAsync()
	// The check for other kinds of lock on the path goes out beside the
	// lease's create: both come after the create of the acquirer's node in
	// locks/, which is what a Mutex or an RWMutex created later finds.
	checked := make(chan error, 1)
	go func() { checked <- s.refuseOtherKind(ctx) }()
	// If ctx ends before the outcome is known, CreateProtected deletes the
	// node in the background once it turns out to exist.
	node, err := s.sess.CreateProtected(ctx, s.leases.dir, leaseName, s.leases.data, zkcoord.FlagEphemeralSequential)
	if kerr := <-checked; kerr != nil {
		if err == nil {
			deleteNow(ctx, s.sess, node)
		}
		if rerr := guard.Release(ctx); rerr != nil {
			s.sess.Logger().Debug("lock: releasing the semaphore's mutex", "path", s.path, "err", rerr)
		}
		return nil, kerr
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %s: %w", s.leases.dir, err)
	}
	l, err := s.wait(ctx, node, guard, try)
	if err != nil {
		s.sess.EnsureDeletedLater(node)
		return nil, err
	}
	return l, nil
}

// refuseOtherKind returns ErrOtherKind if the semaphore's path holds the
// contenders of a Mutex or an RWMutex (see contention.refuseOtherKind).
func (s *Semaphore) refuseOtherKind(ctx context.Context) error {
	if brokenMixedKinds() {
		return nil
	}
	children, _, err := s.sess.Children(ctx, s.path)
	if err != nil {
		return fmt.Errorf("lock: semaphore %s: %w", s.path, err)
	}
	if node, kind := otherKind(children, semaphoreKind); node != "" {
		return otherKindErr(s.path, semaphoreKind, kind, node)
	}
	return nil
}

// wait counts the leases, while holding the mutex guard, until there are
// at most MaxLeases.
func (s *Semaphore) wait(ctx context.Context, node string, guard *Lease, try bool) (*Lease, error) {
	me := zkcoord.Base(node)
	own := &self{node: node}
	watch := false // list without a watch first: a free lease needs none
	for {
		var (
			children []string
			cw       <-chan zkcoord.Event
			err      error
		)
		if watch {
			children, _, cw, err = s.sess.ChildrenW(ctx, s.leases.dir)
		} else {
			children, _, err = s.sess.Children(ctx, s.leases.dir)
		}
		if errors.Is(err, zkcoord.ErrNoNode) {
			return nil, fmt.Errorf("lock: %s: %w", node, ErrNodeDeleted)
		}
		if err != nil {
			return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, err)
		}
		leases := sortContenders(children, leaseContender)
		if _, found := blocker(leases, me); !found {
			return nil, fmt.Errorf("lock: %s: %w", node, ErrNodeDeleted)
		}
		if len(leases) <= s.max {
			if err := guard.Err(); err != nil {
				return nil, fmt.Errorf("lock: semaphore %s: mutex: %w", s.path, err)
			}
			return own.lease(s.sess), nil
		}
		if try {
			return nil, fmt.Errorf("lock: semaphore %s: %w", s.path, ErrNoLease)
		}
		if !watch {
			watch = true
			own.watchFrom(ctx, s.sess)
			continue
		}
		if err := s.leases.block(ctx, cw, own, guard.Done()); err != nil {
			if guard.ended() {
				return nil, fmt.Errorf("lock: semaphore %s: mutex: %w", s.path, guard.Err())
			}
			return nil, err
		}
	}
}
