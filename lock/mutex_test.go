package lock_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

var curatorMutexNode = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$`)

func newMutex(t testing.TB, sess *zkcoord.Session, dir string, opts ...lock.Option) *lock.Mutex {
	t.Helper()
	m, err := lock.NewMutex(sess, dir, opts...)
	if err != nil {
		t.Fatalf("NewMutex: %v", err)
	}
	return m
}

func TestMutexLockUnlock(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	sess := connect(t)
	dir := testDir(t)
	m := newMutex(t, sess, dir, lock.WithData([]byte("me")))

	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if got := zkcoord.Base(l.Path()); !curatorMutexNode.MatchString(got) {
		t.Errorf("node %q does not have Curator's InterProcessMutex layout", got)
	}
	if zkcoord.Parent(l.Path()) != dir {
		t.Errorf("node %s is not in %s", l.Path(), dir)
	}
	data, st, err := sess.Get(ctx, l.Path())
	if err != nil {
		t.Fatalf("get own node: %v", err)
	}
	if string(data) != "me" || st.EphemeralOwner != sess.ID() {
		t.Errorf("node data %q owner 0x%x, want %q owned by 0x%x", data, st.EphemeralOwner, "me", sess.ID())
	}
	if l.Token() != st.Czxid || l.Token() == 0 {
		t.Errorf("Token %d, want czxid %d", l.Token(), st.Czxid)
	}
	f, err := sess.FenceOf(ctx, l.Path())
	if err != nil || f.Path != l.Fence().Path || f.Token != l.Fence().Token || !l.Fence().Unique {
		t.Errorf("Fence %+v, FenceOf %+v (%v)", l.Fence(), f, err)
	}
	if l.Err() != nil || closed(l.Done()) {
		t.Fatalf("fresh lease: Err %v, Done closed %v", l.Err(), closed(l.Done()))
	}
	if _, err := sess.GuardedSet(ctx, l.Fence(), l.Path(), []byte("me"), -1); err != nil {
		t.Errorf("guarded write while holding: %v", err)
	}

	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if !closed(l.Done()) || !errors.Is(l.Err(), lock.ErrReleased) {
		t.Errorf("after Unlock: Done closed %v, Err %v; want closed, ErrReleased", closed(l.Done()), l.Err())
	}
	if c := children(t, sess, dir); len(c) != 0 {
		t.Errorf("nodes left after Unlock: %v", c)
	}
	if err := m.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("second Unlock: %v, want ErrNotHeld", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Errorf("Release after Unlock: %v, want nil (idempotent)", err)
	}
	if _, err := sess.GuardedSet(ctx, l.Fence(), dir, nil, -1); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Errorf("guarded write after Unlock: %v, want ErrNotOwner", err)
	}

	// The same value locks again.
	l2, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock again: %v", err)
	}
	if l2.Token() <= l.Token() {
		t.Errorf("second token %d not above first %d", l2.Token(), l.Token())
	}
	if err := l2.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

func TestMutexNotReentrant(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	sess := connect(t)
	m := newMutex(t, sess, testDir(t))
	if _, err := m.Lock(ctx); err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if _, err := m.Lock(ctx); !errors.Is(err, lock.ErrAlreadyHeld) {
		t.Errorf("second Lock: %v, want ErrAlreadyHeld", err)
	}
	if _, err := m.TryLock(ctx); !errors.Is(err, lock.ErrAlreadyHeld) {
		t.Errorf("TryLock while held: %v, want ErrAlreadyHeld", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}

func TestMutexBadInput(t *testing.T) {
	sess := connect(t)
	for _, p := range []string{"", "rel/path", "/", "/a/", "/a//b", "/a/./b"} {
		if _, err := lock.NewMutex(sess, p); err == nil {
			t.Errorf("NewMutex(%q) accepted", p)
		}
		if _, err := lock.NewRWMutex(sess, p); err == nil {
			t.Errorf("NewRWMutex(%q) accepted", p)
		}
		if _, err := lock.NewSemaphore(sess, p, 1); err == nil {
			t.Errorf("NewSemaphore(%q) accepted", p)
		}
	}
	if _, err := lock.NewMutex(nil, "/x"); err == nil {
		t.Error("NewMutex(nil session) accepted")
	}
	if _, err := lock.NewSemaphore(sess, "/x", 0); err == nil {
		t.Error("NewSemaphore with 0 leases accepted")
	}
	big := make([]byte, sess.Config().MaxDataSize+1)
	if _, err := lock.NewMutex(sess, "/x", lock.WithData(big)); !errors.Is(err, zkcoord.ErrTooLarge) {
		t.Errorf("oversized data: %v, want ErrTooLarge", err)
	}
}

func TestMutexTryLock(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b := connect(t), connect(t)
	dir := testDir(t)
	ma, mb := newMutex(t, a, dir), newMutex(t, b, dir)
	la, err := ma.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock on a free lock: %v", err)
	}
	if _, err := mb.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock on a held lock: %v, want ErrLocked", err)
	}
	testkit.WaitFor(t, 30*time.Second, "failed TryLock's node deleted", func() error {
		if c := children(t, a, dir); len(c) != 1 {
			return fmt.Errorf("children %v", c)
		}
		return nil
	})
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb, err := mb.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock after release: %v", err)
	}
	lb.Release(ctx)
}

// TestMutexExclusion runs many contenders on several sessions and checks
// that holders never overlap and that tokens grow with each new holder.
func TestMutexExclusion(t *testing.T) {
	ctx := testCtx(t, 120*time.Second)
	dir := testDir(t)
	const sessions, perSession, rounds = 4, 3, 8
	var (
		inside    atomic.Int32
		lastToken atomic.Int64
		entries   atomic.Int32
		wg        sync.WaitGroup
		errs      = make(chan error, sessions*perSession)
	)
	for i := 0; i < sessions; i++ {
		sess := connect(t)
		for j := 0; j < perSession; j++ {
			m := newMutex(t, sess, dir)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					l, err := m.Lock(ctx)
					if err != nil {
						errs <- err
						return
					}
					if n := inside.Add(1); n != 1 {
						errs <- fmt.Errorf("%d holders at once", n)
					}
					if prev := lastToken.Swap(l.Token()); prev >= l.Token() {
						errs <- fmt.Errorf("token %d after %d", l.Token(), prev)
					}
					entries.Add(1)
					time.Sleep(time.Millisecond) // widen the window for an overlap
					inside.Add(-1)
					if err := m.Unlock(ctx); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := entries.Load(); n != sessions*perSession*rounds {
		t.Errorf("%d entries, want %d", n, sessions*perSession*rounds)
	}
}

// TestMutexCancelWaiting: a waiter whose ctx ends returns and deletes its
// node; the lock then passes over it.
func TestMutexCancelWaiting(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b, c := connect(t), connect(t), connect(t)
	dir := testDir(t)
	la, err := newMutex(t, a, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	mb := newMutex(t, b, dir)
	errc := make(chan error, 1)
	go func() {
		_, err := mb.Lock(wctx)
		errc <- err
	}()
	testkit.WaitFor(t, 30*time.Second, "waiter's node", func() error {
		if n := len(children(t, a, dir)); n != 2 {
			return fmt.Errorf("%d nodes", n)
		}
		return nil
	})
	// A third contender queues behind b.
	mc := newMutex(t, c, dir)
	lcc := make(chan *lock.Lease, 1)
	go func() {
		l, err := mc.Lock(ctx)
		if err != nil {
			errc <- err
		}
		lcc <- l
	}()
	testkit.WaitFor(t, 30*time.Second, "third node", func() error {
		if n := len(children(t, a, dir)); n != 3 {
			return fmt.Errorf("%d nodes", n)
		}
		return nil
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock: %v, want context.Canceled", err)
	}
	testkit.WaitFor(t, 30*time.Second, "cancelled waiter's node deleted", func() error {
		if n := len(children(t, a, dir)); n != 2 {
			return fmt.Errorf("%d nodes", n)
		}
		return nil
	})
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-lcc:
		if l == nil {
			t.Fatal("third contender failed")
		}
		l.Release(ctx)
	case <-ctx.Done():
		t.Fatal("third contender never acquired")
	}
	// b's Mutex value is usable again.
	lb, err := mb.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock after a cancelled Lock: %v", err)
	}
	lb.Release(ctx)
}

// TestMutexNodeDeleted: another client deleting the holder's node ends the
// lease, and guarded writes through its fence fail.
func TestMutexNodeDeleted(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, admin := connect(t), connect(t)
	dir := testDir(t)
	m := newMutex(t, a, dir)
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed after the node was deleted")
	}
	if !errors.Is(l.Err(), lock.ErrLost) || !errors.Is(l.Err(), lock.ErrNodeDeleted) {
		t.Errorf("Err %v, want ErrLost and ErrNodeDeleted", l.Err())
	}
	if _, err := a.GuardedSet(ctx, l.Fence(), dir, []byte("x"), -1); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Errorf("guarded write after loss: %v, want ErrNotOwner", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, lock.ErrLost) {
		t.Errorf("Unlock of a lost lease: %v, want ErrLost", err)
	}
	// A lost lease frees the value for a new Lock.
	l2, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock after loss: %v", err)
	}
	l2.Release(ctx)
}

// TestMutexDataChangeKeepsLease: a data change on the holder's node re-arms
// the watch and does not end the lease; a later deletion still does.
func TestMutexDataChangeKeepsLease(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, admin := connect(t), connect(t)
	l, err := newMutex(t, a, testDir(t)).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Set(ctx, l.Path(), []byte("poke"), -1); err != nil {
		t.Fatal(err)
	}
	// Deleting after the change must still be noticed, which needs the
	// watch to have been set again.
	if err := admin.Delete(ctx, l.Path(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed")
	}
	if !errors.Is(l.Err(), lock.ErrNodeDeleted) {
		t.Errorf("Err %v, want ErrNodeDeleted", l.Err())
	}
}

func TestMutexSessionClosed(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a := connect(t)
	l, err := newMutex(t, a, testDir(t)).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed")
	}
	if !errors.Is(l.Err(), lock.ErrLost) || !errors.Is(l.Err(), zkcoord.ErrSessionClosed) {
		t.Errorf("Err %v, want ErrLost and ErrSessionClosed", l.Err())
	}
	if err := l.Release(ctx); !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Errorf("Release after session end: %v", err)
	}
}

// TestMutexHerdFree: with many waiters, each lock node is watched by at
// most two sessions: its owner and its successor.
func TestMutexHerdFree(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	const waiters = 8
	holder := connect(t)
	lh, err := newMutex(t, holder, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, waiters)
	var order []*lock.Lease
	var mu sync.Mutex
	for i := 0; i < waiters; i++ {
		sess := connect(t)
		m := newMutex(t, sess, dir)
		go func() {
			l, err := m.Lock(ctx)
			if err == nil {
				mu.Lock()
				order = append(order, l)
				mu.Unlock()
				err = l.Release(ctx)
			}
			results <- err
		}()
	}
	testkit.WaitFor(t, 30*time.Second, "all waiters queued", func() error {
		if n := len(children(t, holder, dir)); n != waiters+1 {
			return fmt.Errorf("%d nodes", n)
		}
		return nil
	})
	var watchers map[string]int
	testkit.WaitFor(t, 30*time.Second, "each waiter watching", func() error {
		w, err := cluster.Server(0).Wchc(ctx)
		if err != nil {
			return err
		}
		watchers = map[string]int{}
		for _, paths := range w {
			for _, p := range paths {
				if zkcoord.Parent(p) == dir {
					watchers[p]++
				}
			}
		}
		// Every waiter's node is watched by its owner; all but the last
		// also by the next waiter. The holder got the lock at once and
		// asked its lease nothing, so it does not watch its node.
		total := 0
		for _, n := range watchers {
			total += n
		}
		if total != 2*waiters {
			return fmt.Errorf("%d watches on lock nodes: %v", total, watchers)
		}
		return nil
	})
	for p, n := range watchers {
		if n > 2 {
			t.Errorf("%s watched by %d sessions", p, n)
		}
	}
	lh.Release(ctx)
	for i := 0; i < waiters; i++ {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
}

// TestMutexManyLocksOneSession: 64 goroutines on 64 locks share a Session.
func TestMutexManyLocksOneSession(t *testing.T) {
	ctx := testCtx(t, 120*time.Second)
	sess := connect(t)
	dir := testDir(t)
	const goroutines, rounds = 64, 10
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	start := time.Now()
	for i := 0; i < goroutines; i++ {
		m := newMutex(t, sess, fmt.Sprintf("%s/l%02d", dir, i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				if _, err := m.Lock(ctx); err != nil {
					errs <- err
					return
				}
				if err := m.Unlock(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d lock+unlock pairs over one session in %v", goroutines*rounds, time.Since(start))
}

func TestMutexChroot(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	root := testDir(t)
	a := connect(t, withChroot(root))
	b := connect(t, withChroot(root))
	la, err := newMutex(t, a, "/job").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *lock.Lease, 1)
	mb := newMutex(t, b, "/job")
	go func() {
		l, err := mb.Lock(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	testkit.WaitFor(t, 30*time.Second, "waiter queued", func() error {
		if n := len(children(t, a, "/job")); n != 2 {
			return fmt.Errorf("%d nodes", n)
		}
		return nil
	})
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if l := <-got; l != nil {
		if zkcoord.Parent(l.Path()) != "/job" {
			t.Errorf("path %s not chroot-relative", l.Path())
		}
		l.Release(ctx)
	}
}
