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

var (
	curatorReadNode  = regexp.MustCompile(`^_c_[0-9a-f-]{36}-__READ__\d{10}$`)
	curatorWriteNode = regexp.MustCompile(`^_c_[0-9a-f-]{36}-__WRIT__\d{10}$`)
)

func newRW(t testing.TB, sess *zkcoord.Session, dir string) *lock.RWMutex {
	t.Helper()
	rw, err := lock.NewRWMutex(sess, dir)
	if err != nil {
		t.Fatalf("NewRWMutex: %v", err)
	}
	return rw
}

// queued waits until dir has n children.
func queued(t *testing.T, sess *zkcoord.Session, dir string, n int) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("%d contenders in %s", n, dir), func() error {
		if c := children(t, sess, dir); len(c) != n {
			return fmt.Errorf("children %v", c)
		}
		return nil
	})
}

func TestRWMutexReadersShareWritersExclude(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b, c := connect(t), connect(t), connect(t)
	dir := testDir(t)
	ra, rb, wc := newRW(t, a, dir), newRW(t, b, dir), newRW(t, c, dir)

	l1, err := ra.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !curatorReadNode.MatchString(zkcoord.Base(l1.Path())) {
		t.Errorf("read node %s does not have Curator's layout", l1.Path())
	}
	l2, err := rb.TryRLock(ctx)
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	if _, err := wc.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock with readers in: %v, want ErrLocked", err)
	}
	queued(t, a, dir, 2)

	// A writer queues behind the readers...
	wl := make(chan *lock.Lease, 1)
	go func() {
		l, err := wc.Lock(ctx)
		if err != nil {
			t.Error(err)
		}
		wl <- l
	}()
	queued(t, a, dir, 3)
	// ...and a reader that comes after the writer waits for it.
	if _, err := newRW(t, a, dir).TryRLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryRLock behind a waiting writer: %v, want ErrLocked", err)
	}
	queued(t, a, dir, 3)
	if err := ra.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wl:
		t.Fatal("writer acquired while a reader still holds")
	default:
	}
	if err := rb.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	w := <-wl
	if w == nil {
		t.FailNow()
	}
	if !curatorWriteNode.MatchString(zkcoord.Base(w.Path())) {
		t.Errorf("write node %s does not have Curator's layout", w.Path())
	}
	if !closed(l1.Done()) || !closed(l2.Done()) {
		t.Error("readers' leases not ended after RUnlock")
	}
	if err := wc.RUnlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("RUnlock while holding the write lock: %v, want ErrNotHeld", err)
	}
	if _, err := wc.RLock(ctx); !errors.Is(err, lock.ErrAlreadyHeld) {
		t.Errorf("RLock while holding the write lock: %v, want ErrAlreadyHeld", err)
	}
	if err := wc.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRWMutexExclusion: readers and writers on several sessions; no writer
// ever overlaps anyone, and readers do overlap each other.
func TestRWMutexExclusion(t *testing.T) {
	ctx := testCtx(t, 120*time.Second)
	dir := testDir(t)
	const sessions, rounds = 6, 8
	var (
		readers, writers atomic.Int32
		maxReaders       atomic.Int32
		wg               sync.WaitGroup
		errs             = make(chan error, 100)
	)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	for i := 0; i < sessions; i++ {
		sess := connect(t)
		rw := newRW(t, sess, dir)
		writer := i%3 == 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				if writer {
					if _, err := rw.Lock(ctx); err != nil {
						report(err)
						return
					}
					if n := writers.Add(1); n != 1 || readers.Load() != 0 {
						report(fmt.Errorf("writer in with %d writers, %d readers", n, readers.Load()))
					}
					time.Sleep(time.Millisecond)
					writers.Add(-1)
					if err := rw.Unlock(ctx); err != nil {
						report(err)
						return
					}
				} else {
					if _, err := rw.RLock(ctx); err != nil {
						report(err)
						return
					}
					n := readers.Add(1)
					if writers.Load() != 0 {
						report(fmt.Errorf("reader in with a writer"))
					}
					for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
					}
					time.Sleep(3 * time.Millisecond)
					readers.Add(-1)
					if err := rw.RUnlock(ctx); err != nil {
						report(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("at most %d readers at once", maxReaders.Load())
}

// TestRWMutexHerdFree: readers waiting behind one writer watch that
// writer; a writer waiting behind readers watches only the last reader.
func TestRWMutexHerdFree(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	dir := testDir(t)
	w1 := connect(t)
	lw, err := newRW(t, w1, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const readers = 4
	got := make(chan error, readers+1)
	start := func(sess *zkcoord.Session, write bool) {
		rw := newRW(t, sess, dir)
		go func() {
			var l *lock.Lease
			var err error
			if write {
				l, err = rw.Lock(ctx)
			} else {
				l, err = rw.RLock(ctx)
			}
			if err == nil {
				err = l.Release(ctx)
			}
			got <- err
		}()
	}
	var sessions []*zkcoord.Session
	for i := 0; i < readers; i++ {
		s := connect(t)
		sessions = append(sessions, s)
		start(s, false)
		queued(t, w1, dir, i+2)
	}
	w2 := connect(t)
	start(w2, true)
	queued(t, w1, dir, readers+2)

	testkit.WaitFor(t, 30*time.Second, "watches", func() error {
		w, err := cluster.Server(0).Wchc(ctx)
		if err != nil {
			return err
		}
		// Each reader watches its own node and the first writer's.
		for _, s := range sessions {
			if n := len(w[s.ID()]); n != 2 {
				return fmt.Errorf("reader 0x%x watches %v", s.ID(), w[s.ID()])
			}
			found := false
			for _, p := range w[s.ID()] {
				found = found || p == lw.Path()
			}
			if !found {
				return fmt.Errorf("reader 0x%x does not watch the writer: %v", s.ID(), w[s.ID()])
			}
		}
		if n := len(w[w2.ID()]); n != 2 {
			return fmt.Errorf("second writer watches %v", w[w2.ID()])
		}
		return nil
	})
	if err := lw.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < readers+1; i++ {
		if err := <-got; err != nil {
			t.Error(err)
		}
	}
}

func TestRWMutexCancelWaitingWriter(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b := connect(t), connect(t)
	dir := testDir(t)
	lr, err := newRW(t, a, dir).RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := newRW(t, b, dir).Lock(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("writer with expiring ctx: %v", err)
	}
	queued(t, a, dir, 1)
	// A new reader is not blocked by the writer that gave up.
	l2, err := newRW(t, b, dir).TryRLock(ctx)
	if err != nil {
		t.Fatalf("TryRLock after the writer gave up: %v", err)
	}
	l2.Release(ctx)
	lr.Release(ctx)
}
