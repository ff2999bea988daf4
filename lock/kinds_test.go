package lock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

// lockKind is one way of taking a lock on a path, as a user picks it.
type lockKind struct {
	name string // how ErrOtherKind's message names it
	take func(ctx context.Context, sess *zkcoord.Session, path string) (*lock.Lease, error)
}

var (
	mutexKind = lockKind{"mutex", func(ctx context.Context, sess *zkcoord.Session, path string) (*lock.Lease, error) {
		m, err := lock.NewMutex(sess, path)
		if err != nil {
			return nil, err
		}
		return m.Lock(ctx)
	}}
	readKind = lockKind{"read/write lock", func(ctx context.Context, sess *zkcoord.Session, path string) (*lock.Lease, error) {
		rw, err := lock.NewRWMutex(sess, path)
		if err != nil {
			return nil, err
		}
		return rw.RLock(ctx)
	}}
	writeKind = lockKind{"read/write lock", func(ctx context.Context, sess *zkcoord.Session, path string) (*lock.Lease, error) {
		rw, err := lock.NewRWMutex(sess, path)
		if err != nil {
			return nil, err
		}
		return rw.Lock(ctx)
	}}
	semKind = lockKind{"semaphore", func(ctx context.Context, sess *zkcoord.Session, path string) (*lock.Lease, error) {
		s, err := lock.NewSemaphore(sess, path, 2)
		if err != nil {
			return nil, err
		}
		return s.Acquire(ctx)
	}}
)

// kindPairs are the pairs of lock kinds whose node layouts differ, in both
// orders, named first-then-second.
var kindPairs = []struct {
	name          string
	first, second lockKind
}{
	{"mutex-then-read", mutexKind, readKind},
	{"read-then-mutex", readKind, mutexKind},
	{"mutex-then-write", mutexKind, writeKind},
	{"write-then-mutex", writeKind, mutexKind},
	{"mutex-then-semaphore", mutexKind, semKind},
	{"semaphore-then-mutex", semKind, mutexKind},
	{"read-then-semaphore", readKind, semKind},
	{"semaphore-then-read", semKind, readKind},
	{"write-then-semaphore", writeKind, semKind},
	{"semaphore-then-write", semKind, writeKind},
}

// contenderNodes lists every node under path, its semaphore's
// subdirectories included.
func contenderNodes(t *testing.T, sess *zkcoord.Session, path string) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{path, path + "/locks", path + "/leases"} {
		for _, c := range children(t, sess, dir) {
			if c != "locks" && c != "leases" {
				out = append(out, zkcoord.Join(dir, c))
			}
		}
	}
	return out
}

// A lock of one kind refuses a path that holds a lock of another kind,
// with ErrOtherKind naming both kinds, instead of being taken beside it; it
// leaves no node behind, and the holder keeps its lock. Once the holder
// has released, the second kind takes the path.
func TestOtherKindRefused(t *testing.T) {
	for _, tc := range kindPairs {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 60*time.Second)
			a, b := connect(t), connect(t)
			path := testDir(t)
			held, err := tc.first.take(ctx, a, path)
			if err != nil {
				t.Fatalf("%s: %v", tc.first.name, err)
			}
			before := contenderNodes(t, a, path)

			l, err := tc.second.take(ctx, b, path)
			if err == nil {
				l.Release(ctx)
				t.Fatalf("a %s was taken beside a held %s", tc.second.name, tc.first.name)
			}
			if !errors.Is(err, lock.ErrOtherKind) {
				t.Fatalf("%s beside a %s: %v, want lock.ErrOtherKind", tc.second.name, tc.first.name, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.first.name) || !strings.Contains(msg, tc.second.name) || !strings.Contains(msg, path) {
				t.Errorf("error %q does not name the path and both kinds (%s, %s)", msg, tc.first.name, tc.second.name)
			}
			if after := contenderNodes(t, a, path); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("nodes after the refusal %v, want only the holder's %v", after, before)
			}
			if err := held.Err(); err != nil {
				t.Fatalf("the holder lost its lock: %v", err)
			}
			if err := held.Release(ctx); err != nil {
				t.Fatal(err)
			}
			// The first kind's directories may linger (a semaphore's
			// locks/ and leases/ are containers, removed by the server
			// some time after they empty): without contenders they do not
			// stand in the way.
			l, err = tc.second.take(ctx, b, path)
			if err != nil {
				t.Fatalf("%s after the %s was released: %v", tc.second.name, tc.first.name, err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Two kinds that start on one path at the same time are never both
// taken: whichever created its node last sees the other's and refuses
// (both may refuse).
func TestOtherKindConcurrent(t *testing.T) {
	for _, tc := range kindPairs {
		if strings.HasPrefix(tc.name, "read-") || strings.HasPrefix(tc.name, "write-") || strings.HasPrefix(tc.name, "semaphore-then-mutex") {
			continue // each unordered pair once
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 90*time.Second)
			a, b := connect(t), connect(t)
			for round := range 8 {
				path := fmt.Sprintf("%s-%d", testDir(t), round)
				var (
					wg     sync.WaitGroup
					leases [2]*lock.Lease
					errs   [2]error
				)
				for i, k := range []struct {
					kind lockKind
					sess *zkcoord.Session
				}{{tc.first, a}, {tc.second, b}} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						wait, cancel := context.WithTimeout(ctx, 20*time.Second)
						defer cancel()
						leases[i], errs[i] = k.kind.take(wait, k.sess, path)
					}()
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil && !errors.Is(err, lock.ErrOtherKind) {
						t.Errorf("round %d, %s: %v", round, []string{tc.first.name, tc.second.name}[i], err)
					}
				}
				if leases[0] != nil && leases[1] != nil {
					t.Errorf("round %d: a %s and a %s were both taken on %s", round, tc.first.name, tc.second.name, path)
				}
				for _, l := range leases {
					if l != nil {
						if err := l.Release(ctx); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		})
	}
}

// Curator's holders of each kind are refused by the other kinds of this
// package, and still exclude a lock of their own kind.
func TestInteropCuratorOtherKind(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	cur := startCurator(t)
	sess := connect(t)
	for _, tc := range []struct {
		curator string   // what Curator holds
		refused lockKind // a kind that must refuse it
	}{
		{"mutex", readKind},
		{"read", mutexKind},
		{"write", semKind},
		{"sem", writeKind},
	} {
		dir := testDir(t)
		cur.send(t, fmt.Sprintf("h hold %s %s 1", tc.curator, dir))
		cur.mustExpect(t, ctx, "h", "held")
		if _, err := tc.refused.take(ctx, sess, dir); !errors.Is(err, lock.ErrOtherKind) {
			t.Errorf("a %s beside Curator's %s: %v, want ErrOtherKind", tc.refused.name, tc.curator, err)
		}
		var same acquirer // a lock of Curator's kind, which must not be taken
		switch tc.curator {
		case "mutex":
			same = newMutex(t, sess, dir).TryLock
		case "read", "write":
			same = newRW(t, sess, dir).TryLock
		case "sem":
			same = newSem(t, sess, dir, 1).TryAcquire
		}
		if _, err := same(ctx); !errors.Is(err, lock.ErrLocked) && !errors.Is(err, lock.ErrNoLease) {
			t.Errorf("the same kind as Curator's %s: %v, want ErrLocked or ErrNoLease", tc.curator, err)
		}
		cur.send(t, "h release")
		cur.mustExpect(t, ctx, "h", "released")
	}
}
