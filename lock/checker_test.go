package lock_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

// checker is the Go side of the overlap checker shared with the Curator and
// Kazoo peers (see testdata/CuratorLocks.java): holders record entry and
// exit in one znode with version-checked writes. States: "" (free),
// "W<id>" (an exclusive holder), "R<n>" (n readers), "S<n>" (n leases).
// An exclusive holder must find the node free and change it without
// interference; readers and lease holders retry on interference but must
// never find an exclusive holder, or more than max leases.
type checker struct {
	sess *zkcoord.Session
	path string
	kind string // mutex, write, read, sem
	max  int
}

func newChecker(t testing.TB, sess *zkcoord.Session, path, kind string, max int) checker {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	if err := sess.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	return checker{sess: sess, path: path, kind: kind, max: max}
}

func (c checker) with(sess *zkcoord.Session, kind string) checker {
	c.sess, c.kind = sess, kind
	return c
}

func (c checker) exclusive() bool { return c.kind == "mutex" || c.kind == "write" }

func (c checker) prefix() string {
	if c.kind == "sem" {
		return "S"
	}
	return "R"
}

func (c checker) get(ctx context.Context) (string, int32, error) {
	d, st, err := c.sess.Get(ctx, c.path)
	if err != nil {
		return "", 0, err
	}
	return string(d), st.Version, nil
}

// set reports false on a version conflict.
func (c checker) set(ctx context.Context, v string, version int32) (bool, error) {
	_, err := c.sess.Set(ctx, c.path, []byte(v), version)
	if errors.Is(err, zkcoord.ErrBadVersion) {
		return false, nil
	}
	return err == nil, err
}

// enter returns the violations it saw.
func (c checker) enter(ctx context.Context, id string) ([]string, error) {
	var bad []string
	for {
		s, v, err := c.get(ctx)
		if err != nil {
			return bad, err
		}
		if c.exclusive() {
			if s != "" {
				bad = append(bad, "entered while the checker says "+s)
			}
			ok, err := c.set(ctx, "W"+id, v)
			if err == nil && !ok {
				bad = append(bad, "checker changed while entering")
			}
			return bad, err
		}
		n := 0
		if strings.HasPrefix(s, c.prefix()) {
			n, _ = strconv.Atoi(s[1:])
		} else if s != "" {
			return append(bad, "entered while the checker says "+s), nil
		}
		if c.kind == "sem" && n+1 > c.max {
			bad = append(bad, fmt.Sprintf("lease %d of %d", n+1, c.max))
		}
		ok, err := c.set(ctx, c.prefix()+strconv.Itoa(n+1), v)
		if err != nil || ok {
			return bad, err
		}
	}
}

func (c checker) exit(ctx context.Context, id string) ([]string, error) {
	for {
		s, v, err := c.get(ctx)
		if err != nil {
			return nil, err
		}
		if c.exclusive() {
			var bad []string
			if s != "W"+id {
				bad = append(bad, "leaving while the checker says "+s)
			}
			ok, err := c.set(ctx, "", v)
			if err == nil && !ok {
				bad = append(bad, "checker changed while leaving")
			}
			return bad, err
		}
		if !strings.HasPrefix(s, c.prefix()) {
			return []string{"leaving while the checker says " + s}, nil
		}
		n, _ := strconv.Atoi(s[1:])
		next := ""
		if n > 1 {
			next = c.prefix() + strconv.Itoa(n-1)
		}
		ok, err := c.set(ctx, next, v)
		if err != nil || ok {
			return nil, err
		}
	}
}

// downgrade turns the exclusive holder id into one reader, as an RWMutex
// holder does with Downgrade: the checker must say "W<id>" and change
// without interference.
func (c checker) downgrade(ctx context.Context, id string) ([]string, error) {
	s, v, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	var bad []string
	if s != "W"+id {
		bad = append(bad, "downgrading while the checker says "+s)
	}
	ok, err := c.set(ctx, "R1", v)
	if err == nil && !ok {
		bad = append(bad, "checker changed while downgrading")
	}
	return bad, err
}

// acquirer is one Go contender: it acquires, and returns the lease.
type acquirer func(ctx context.Context) (*lock.Lease, error)

// loopResult counts what a group of contenders did.
type loopResult struct {
	mu         sync.Mutex
	entries    int
	violations []string
	errs       []error
}

func (r *loopResult) add(entries int, bad []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries += entries
	r.violations = append(r.violations, bad...)
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

// goLoop runs rounds of acquire, check in, hold briefly, check out,
// release, for each acquirer concurrently, and returns when all are done.
func goLoop(ctx context.Context, name string, c checker, rounds int, acquirers ...acquirer) *loopResult {
	res := &loopResult{}
	var wg sync.WaitGroup
	for i, acq := range acquirers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				id := fmt.Sprintf("%s-%d-%d", name, i, r)
				l, err := acq(ctx)
				if err != nil {
					res.add(0, nil, err)
					return
				}
				bad, err := c.enter(ctx, id)
				if err == nil {
					time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
					var more []string
					more, err = c.exit(ctx, id)
					bad = append(bad, more...)
				}
				if rerr := l.Release(ctx); err == nil {
					err = rerr
				}
				for j := range bad {
					bad[j] = id + ": " + bad[j]
				}
				res.add(1, bad, err)
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return res
}

// downgradeLoop runs rounds of write lock, check in as the writer, check
// over to one reader, Downgrade, hold briefly, check out, RUnlock,
// for each RWMutex concurrently, and returns when all are done. c's kind
// is ignored.
func downgradeLoop(ctx context.Context, name string, c checker, rounds int, rws ...*lock.RWMutex) *loopResult {
	res := &loopResult{}
	write, read := c.with(c.sess, "write"), c.with(c.sess, "read")
	var wg sync.WaitGroup
	for i, rw := range rws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				id := fmt.Sprintf("%s-%d-%d", name, i, r)
				bad, err := downgradeOnce(ctx, rw, write, read, id)
				for j := range bad {
					bad[j] = id + ": " + bad[j]
				}
				res.add(1, bad, err)
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return res
}

func downgradeOnce(ctx context.Context, rw *lock.RWMutex, write, read checker, id string) ([]string, error) {
	if _, err := rw.Lock(ctx); err != nil {
		return nil, err
	}
	bad, err := write.enter(ctx, id)
	if err != nil {
		return bad, err
	}
	time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
	// The checker turns to one reader while the write lock still excludes
	// everyone: once Downgrade has let the waiting readers in, they must
	// find it so.
	more, err := write.downgrade(ctx, id)
	bad = append(bad, more...)
	if err != nil {
		return bad, err
	}
	if _, err := rw.Downgrade(ctx); err != nil {
		return bad, err
	}
	time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
	more, err = read.exit(ctx, id)
	bad = append(bad, more...)
	if rerr := rw.RUnlock(ctx); err == nil {
		err = rerr
	}
	return bad, err
}

// semLoop runs rounds of AcquireN (n[i] leases for sems[i]), check in once
// per lease, hold briefly, check out, release, for each semaphore
// concurrently, and returns when all are done. Every lease counts as an
// entry.
func semLoop(ctx context.Context, name string, c checker, rounds int, sems []*lock.Semaphore, n []int) *loopResult {
	res := &loopResult{}
	var wg sync.WaitGroup
	for i, s := range sems {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				id := fmt.Sprintf("%s-%d-%d", name, i, r)
				ml, err := s.AcquireN(ctx, n[i])
				if err != nil {
					res.add(0, nil, err)
					return
				}
				var bad []string
				for k := 0; k < n[i] && err == nil; k++ {
					var more []string
					more, err = c.enter(ctx, fmt.Sprintf("%s-%d", id, k))
					bad = append(bad, more...)
				}
				time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
				for k := 0; k < n[i] && err == nil; k++ {
					var more []string
					more, err = c.exit(ctx, fmt.Sprintf("%s-%d", id, k))
					bad = append(bad, more...)
				}
				if rerr := ml.Release(ctx); err == nil {
					err = rerr
				}
				for j := range bad {
					bad[j] = id + ": " + bad[j]
				}
				res.add(n[i], bad, err)
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return res
}

// check reports the loop's violations and errors, and checks its count.
func (r *loopResult) check(t *testing.T, who string, want int) {
	t.Helper()
	for _, v := range r.violations {
		t.Errorf("%s: violation: %s", who, v)
	}
	for _, err := range r.errs {
		t.Errorf("%s: %v", who, err)
	}
	if r.entries != want {
		t.Errorf("%s: %d entries, want %d", who, r.entries, want)
	}
}
