package lock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

// acquisitionOf runs acquire in the background.
func acquisitionOf(ctx context.Context, acquire func(context.Context) (*lock.Lease, error)) <-chan acquisition {
	got := make(chan acquisition, 1)
	go func() {
		l, err := acquire(ctx)
		got <- acquisition{lease: l, err: err}
	}()
	return got
}

// watching waits until the session watches path.
func watching(t *testing.T, ctx context.Context, sess *zkcoord.Session, path string) {
	t.Helper()
	watchedBy(t, ctx, path, func(id int64) bool { return id == sess.ID() })
}

// watchedBy waits until a session that who accepts watches path.
func watchedBy(t *testing.T, ctx context.Context, path string, who func(session int64) bool) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, "a watch on "+path, func() error {
		w, err := cluster.Server(0).Wchc(ctx)
		if err != nil {
			return err
		}
		for id, paths := range w {
			if who(id) && slices.Contains(paths, path) {
				return nil
			}
		}
		return fmt.Errorf("watches: %v", w)
	})
}

// TestRWMutexDowngrade: a writer turns its lock into a read lock that
// takes the write node's place: the reader waiting behind it gets in
// beside it, the writer waiting behind that reader waits on, now for the
// downgraded read lock, and gets the lock only once it is released.
func TestRWMutexDowngrade(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b, c, d := connect(t), connect(t), connect(t), connect(t)
	dir := testDir(t)
	rw := newRW(t, a, dir)
	if _, err := rw.Downgrade(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Downgrade without a lock: %v, want ErrNotHeld", err)
	}
	lw, err := rw.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reader := acquisitionOf(ctx, newRW(t, b, dir).RLock)
	queued(t, a, dir, 2)
	writer := acquisitionOf(ctx, newRW(t, c, dir).Lock)
	queued(t, a, dir, 3)
	late := acquisitionOf(ctx, newRW(t, d, dir).RLock)
	queued(t, a, dir, 4)

	lr, err := rw.Downgrade(ctx)
	if err != nil {
		t.Fatalf("Downgrade: %v", err)
	}
	name := zkcoord.Base(lr.Path())
	if !curatorReadNode.MatchString(name) || name[len(name)-10:] != lw.Path()[len(lw.Path())-10:] {
		t.Errorf("read node %s does not carry the write node's number (%s)", name, zkcoord.Base(lw.Path()))
	}
	if !closed(lw.Done()) || !errors.Is(lw.Err(), lock.ErrReleased) {
		t.Errorf("write lease after Downgrade: done %v, err %v", closed(lw.Done()), lw.Err())
	}
	if slices.Contains(children(t, a, dir), zkcoord.Base(lw.Path())) {
		t.Errorf("write node %s still there", lw.Path())
	}
	if lr.Err() != nil || lr.Token() <= lw.Token() {
		t.Errorf("read lease: err %v, token %d after the write lease's %d", lr.Err(), lr.Token(), lw.Token())
	}

	rb := awaitAcquisition(t, ctx, reader).lease
	// The writer waits for the reader before it; once that reader is
	// gone it reads the lock again and waits for the downgraded reader.
	if err := rb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	watching(t, ctx, c, lr.Path())
	select {
	case got := <-writer:
		t.Fatalf("a writer took the lock from a downgraded reader: %v", got.err)
	default:
	}
	cs, err := rw.Contenders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, ct := range cs {
		order = append(order, fmt.Sprintf("%s holds=%v writer=%v", ct.Path, ct.Holds, ct.Writer))
	}
	if len(cs) != 3 || cs[0].Path != lr.Path() || !cs[0].Holds || cs[0].Writer || cs[1].Holds || cs[2].Holds {
		t.Errorf("contenders after the downgrade:\n%s", strings.Join(order, "\n"))
	}

	if _, err := rw.Downgrade(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Downgrade of a read lock: %v, want ErrNotHeld", err)
	}
	if err := rw.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Unlock after Downgrade: %v, want ErrNotHeld", err)
	}
	if err := rw.RUnlock(ctx); err != nil {
		t.Fatalf("RUnlock after Downgrade: %v", err)
	}
	lc := awaitAcquisition(t, ctx, writer).lease
	select {
	case <-late:
		t.Fatal("a reader got in beside a writer")
	default:
	}
	lc.Release(ctx)
	awaitAcquisition(t, ctx, late).lease.Release(ctx)
}

// TestRWMutexDowngradeLost: a write lock whose node another client deleted
// is not turned into a read lock, and leaves no read node behind.
func TestRWMutexDowngradeLost(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, admin := connect(t), connect(t)
	dir := testDir(t)
	rw := newRW(t, a, dir)
	lw, err := rw.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, lw.Path(), -1); err != nil {
		t.Fatal(err)
	}
	_, err = rw.Downgrade(ctx)
	if !errors.Is(err, lock.ErrLost) || !errors.Is(err, lock.ErrNodeDeleted) {
		// The lease may have seen the deletion first, then the value
		// holds nothing any more.
		if !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Downgrade of a deleted write node: %v, want ErrLost and ErrNodeDeleted", err)
		}
	}
	if !errors.Is(lw.Err(), lock.ErrNodeDeleted) {
		t.Errorf("write lease: %v, want ErrNodeDeleted", lw.Err())
	}
	if got := children(t, a, dir); len(got) != 0 {
		t.Errorf("nodes left: %v", got)
	}
	// The value is free again.
	l, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.Release(ctx)
}

// TestRWMutexDowngradeExclusion: writers that downgrade, plain writers and
// readers on several sessions; no writer ever overlaps anyone.
func TestRWMutexDowngradeExclusion(t *testing.T) {
	ctx := testCtx(t, 120*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	a, b, c := connect(t), connect(t), connect(t)
	const rounds = 8
	ck := newChecker(t, a, chk, "write", 1)
	var readers, writers []acquirer
	for _, s := range []*zkcoord.Session{b, c} {
		r, w := newRW(t, s, dir), newRW(t, s, dir)
		readers = append(readers, r.RLock)
		writers = append(writers, w.Lock)
	}
	downgraders := []*lock.RWMutex{newRW(t, a, dir), newRW(t, b, dir), newRW(t, c, dir)}
	res := make(chan *loopResult, 3)
	go func() { res <- downgradeLoop(ctx, "down", ck, rounds, downgraders...) }()
	go func() { res <- goLoop(ctx, "read", ck.with(b, "read"), rounds, readers...) }()
	go func() { res <- goLoop(ctx, "write", ck.with(c, "write"), rounds, writers...) }()
	total := 0
	for range 3 {
		r := <-res
		for _, v := range r.violations {
			t.Errorf("violation: %s", v)
		}
		for _, err := range r.errs {
			t.Error(err)
		}
		total += r.entries
	}
	if total != 7*rounds {
		t.Errorf("%d entries, want %d", total, 7*rounds)
	}
	checkFree(t, ck)
}

// TestRWMutexDowngradeLostReply: the reply to the downgrade's transaction
// is lost after the server applied it; Downgrade settles it by the read
// node and returns the read lease, once.
func TestRWMutexDowngradeLostReply(t *testing.T) {
	ctx := testCtx(t, 120*time.Second)
	proxy := cluster.NewProxy(t)
	sess := connect(t, withServers(proxy.Servers()), withTimeout(testkit.SessionTimeout))
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		dir := testDir(t)
		rw := newRW(t, sess, dir)
		lw, err := rw.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		unknown := make(chan struct{}, 1)
		states := sess.Watch(ctx)
		go func() {
			for sc := range states {
				if sc.State == zkcoord.Suspended {
					select {
					case unknown <- struct{}{}:
					default:
					}
				}
			}
		}()
		var lr *lock.Lease
		lost, err := testkit.LoseReply(t, ctx, proxy, observer, lw.Path(), delay, unknown, func() (err error) {
			lr, err = rw.Downgrade(ctx)
			return err
		})
		if err != nil {
			t.Fatalf("Downgrade: %v", err)
		}
		if got := children(t, observer, dir); len(got) != 1 || got[0] != zkcoord.Base(lr.Path()) {
			t.Fatalf("nodes %v, want only the read node %s", got, lr.Path())
		}
		if !errors.Is(lw.Err(), lock.ErrReleased) || lr.Err() != nil {
			t.Fatalf("write lease %v, read lease %v", lw.Err(), lr.Err())
		}
		if err := rw.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
		return lost
	})
}
