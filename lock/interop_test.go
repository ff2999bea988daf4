package lock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

// peer routes a peer's output lines by their leading tag, so that several
// commands can run on one peer at once.
type peer struct {
	name string
	proc *interop.Proc
	mu   sync.Mutex
	tags map[string]chan string
}

func newPeer(t *testing.T, name string, proc *interop.Proc) *peer {
	t.Helper()
	p := &peer{name: name, proc: proc, tags: map[string]chan string{}}
	go func() {
		for line := range proc.Lines() {
			tag, _, _ := strings.Cut(line, " ")
			p.tag(tag) <- line
		}
	}()
	if _, err := p.expect(testCtx(t, 60*time.Second), "ready", ""); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *peer) tag(tag string) chan string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.tags[tag]
	if !ok {
		ch = make(chan string, 1000)
		p.tags[tag] = ch
	}
	return ch
}

func (p *peer) send(t *testing.T, line string) {
	t.Helper()
	if err := p.proc.Send(line); err != nil {
		t.Fatal(err)
	}
}

// expect waits for the line "<tag> <word> ..." and returns its fields after
// the word. Violations reported meanwhile, and errors, are returned as an
// error.
func (p *peer) expect(ctx context.Context, tag, word string) ([]string, error) {
	var violations []string
	for {
		select {
		case line := <-p.tag(tag):
			f := strings.Fields(line)
			switch {
			case tag == "ready" && len(f) == 1:
				return nil, nil
			case len(f) >= 2 && f[1] == "error":
				return nil, fmt.Errorf("%s: %s", p.name, line)
			case len(f) >= 2 && f[1] == "violation":
				violations = append(violations, line)
			case len(f) >= 2 && f[1] == word:
				if len(violations) > 0 {
					return f[2:], fmt.Errorf("%s: violations:\n%s", p.name, strings.Join(violations, "\n"))
				}
				return f[2:], nil
			}
		case <-p.proc.Done():
			return nil, fmt.Errorf("%s exited: %v\n%s", p.name, p.proc.ExitErr(), p.proc.Stderr())
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: waiting for %q %q: %w", p.name, tag, word, ctx.Err())
		}
	}
}

func (p *peer) mustExpect(t *testing.T, ctx context.Context, tag, word string) []string {
	t.Helper()
	f, err := p.expect(ctx, tag, word)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// pending reports whether a line for tag is already waiting.
func (p *peer) pending(tag string) bool { return len(p.tag(tag)) > 0 }

// checkLoop checks a peer's "done ENTRIES VIOLATIONS" answer.
func (p *peer) checkLoop(t *testing.T, ctx context.Context, tag string, want int) {
	t.Helper()
	f, err := p.expect(ctx, tag, "done")
	if err != nil {
		t.Error(err)
		return
	}
	if len(f) != 2 || f[0] != strconv.Itoa(want) || f[1] != "0" {
		t.Errorf("%s %s: done %v, want %d entries and 0 violations", p.name, tag, f, want)
	}
}

func startCurator(t *testing.T) *peer {
	t.Helper()
	prog := interop.CompileJava(t, "testdata/CuratorLocks.java")
	return newPeer(t, "curator", prog.Start(t, cluster.ConnectString()))
}

func startKazoo(t *testing.T) *peer {
	t.Helper()
	return newPeer(t, "kazoo", interop.StartPython(t, "testdata/kazoo_locks.py", cluster.ConnectString()))
}

// checkFree checks that the checker ended free.
func checkFree(t *testing.T, c checker) {
	t.Helper()
	s, _, err := c.get(testCtx(t, 30*time.Second))
	if err != nil || s != "" {
		t.Errorf("checker ended as %q (%v), want free", s, err)
	}
}

func mutexAcquirers(t *testing.T, dir string, sessions ...*zkcoord.Session) []acquirer {
	var out []acquirer
	for _, s := range sessions {
		m := newMutex(t, s, dir)
		out = append(out, func(ctx context.Context) (*lock.Lease, error) { return m.Lock(ctx) })
	}
	return out
}

// handoff checks that a lock held by a peer (tag holds it) blocks a Go
// contender, which gets it once the peer releases, and that the peer's try
// fails and its hold waits while Go holds.
func handoff(t *testing.T, ctx context.Context, p *peer, sess *zkcoord.Session, holdCmd, tryCmd string, goTry, goLock acquirer) {
	t.Helper()
	p.send(t, "h1 hold "+holdCmd)
	p.mustExpect(t, ctx, "h1", "held")
	if _, err := goTry(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("Go try while %s holds: %v, want ErrLocked", p.name, err)
	}
	got := make(chan *lock.Lease, 1)
	go func() {
		l, err := goLock(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	p.send(t, "h1 release")
	p.mustExpect(t, ctx, "h1", "released")
	l := <-got
	if l == nil {
		t.FailNow()
	}
	p.send(t, "t1 try "+tryCmd)
	if f := p.mustExpect(t, ctx, "t1", "tried"); f[0] != "false" {
		t.Fatalf("%s acquired while Go holds", p.name)
	}
	p.send(t, "h2 hold "+holdCmd)
	// Give the peer's contender time to queue up behind ours: its
	// answer must not come while we hold, however long that is.
	testkit.WaitFor(t, 30*time.Second, "peer queued", func() error {
		if n := len(children(t, sess, zkcoord.Parent(l.Path()))); n < 2 {
			return fmt.Errorf("%d contenders", n)
		}
		return nil
	})
	if p.pending("h2") {
		t.Fatalf("%s got the lock while Go holds it", p.name)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	p.mustExpect(t, ctx, "h2", "held")
	p.send(t, "h2 release")
	p.mustExpect(t, ctx, "h2", "released")
}

func TestInteropCuratorMutex(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	cur := startCurator(t)
	a, b := connect(t), connect(t)
	m := newMutex(t, a, dir)
	handoff(t, ctx, cur, a, "mutex "+dir+" 1", "mutex "+dir+" 1", m.TryLock, m.Lock)

	const rounds = 20
	c := newChecker(t, a, chk, "mutex", 1)
	cur.send(t, fmt.Sprintf("L loop mutex %s 1 3 %d %s", dir, rounds, chk))
	res := goLoop(ctx, "go", c, rounds, mutexAcquirers(t, dir, a, a, b, b)...)
	res.check(t, "zkcoord", 4*rounds)
	cur.checkLoop(t, ctx, "L", 3*rounds)
	checkFree(t, c)
}

func TestInteropCuratorRWMutex(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	cur := startCurator(t)
	a, b := connect(t), connect(t)

	// A Curator reader and a Go reader hold at once; a Go writer waits.
	cur.send(t, "r1 hold read "+dir+" 1")
	cur.mustExpect(t, ctx, "r1", "held")
	lr, err := newRW(t, a, dir).TryRLock(ctx)
	if err != nil {
		t.Fatalf("Go reader beside a Curator reader: %v", err)
	}
	if _, err := newRW(t, b, dir).TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("Go writer beside readers: %v, want ErrLocked", err)
	}
	cur.send(t, "r1 release")
	cur.mustExpect(t, ctx, "r1", "released")
	lr.Release(ctx)
	// Writers exclude each other across libraries.
	rw := newRW(t, a, dir)
	handoff(t, ctx, cur, a, "write "+dir+" 1", "read "+dir+" 1", rw.TryLock, rw.Lock)

	const rounds = 8
	c := newChecker(t, a, chk, "read", 1)
	cur.send(t, fmt.Sprintf("R loop read %s 1 2 %d %s", dir, rounds, chk))
	cur.send(t, fmt.Sprintf("W loop write %s 1 1 %d %s", dir, rounds, chk))
	var readers, writers []acquirer
	for _, s := range []*zkcoord.Session{a, b} {
		r, w := newRW(t, s, dir), newRW(t, s, dir)
		readers = append(readers, func(ctx context.Context) (*lock.Lease, error) { return r.RLock(ctx) })
		writers = append(writers, func(ctx context.Context) (*lock.Lease, error) { return w.Lock(ctx) })
	}
	var wg sync.WaitGroup
	var rres, wres *loopResult
	wg.Add(2)
	go func() { defer wg.Done(); rres = goLoop(ctx, "go-r", c.with(a, "read"), rounds, readers...) }()
	go func() { defer wg.Done(); wres = goLoop(ctx, "go-w", c.with(b, "write"), rounds, writers...) }()
	wg.Wait()
	rres.check(t, "zkcoord readers", 2*rounds)
	wres.check(t, "zkcoord writers", 2*rounds)
	cur.checkLoop(t, ctx, "R", 2*rounds)
	cur.checkLoop(t, ctx, "W", rounds)
	checkFree(t, c)
}

// TestInteropCuratorRWMutexDowngrade: Downgrade lets in a Curator reader
// that waits behind the write lock, while a Curator writer that waits
// behind that reader waits on, for the downgraded read lock: Curator
// orders the read node where the write node was. In loops, Go writers
// that downgrade never overlap Curator's writers or readers wrongly.
func TestInteropCuratorRWMutexDowngrade(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	cur := startCurator(t)
	a, b := connect(t), connect(t)
	rw := newRW(t, a, dir)
	if _, err := rw.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	cur.send(t, "r1 hold read "+dir+" 1")
	queued(t, a, dir, 2)
	cur.send(t, "w1 hold write "+dir+" 1")
	queued(t, a, dir, 3)
	lr, err := rw.Downgrade(ctx)
	if err != nil {
		t.Fatalf("Downgrade: %v", err)
	}
	cur.mustExpect(t, ctx, "r1", "held")
	cur.send(t, "r1 release")
	cur.mustExpect(t, ctx, "r1", "released")
	// Curator's writer, woken by the release of the reader before it,
	// lists the lock again and waits for the downgraded reader.
	watchedBy(t, ctx, lr.Path(), func(id int64) bool { return id != a.ID() })
	if cur.pending("w1") {
		t.Fatal("Curator's writer took the lock from a downgraded reader")
	}
	if err := rw.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	cur.mustExpect(t, ctx, "w1", "held")
	cur.send(t, "w1 release")
	cur.mustExpect(t, ctx, "w1", "released")

	const rounds = 8
	c := newChecker(t, a, chk, "write", 1)
	cur.send(t, fmt.Sprintf("R loop read %s 1 2 %d %s", dir, rounds, chk))
	cur.send(t, fmt.Sprintf("W loop write %s 1 2 %d %s", dir, rounds, chk))
	res := downgradeLoop(ctx, "go-down", c, rounds, newRW(t, a, dir), newRW(t, b, dir))
	res.check(t, "zkcoord downgraders", 2*rounds)
	cur.checkLoop(t, ctx, "R", 2*rounds)
	cur.checkLoop(t, ctx, "W", 2*rounds)
	checkFree(t, c)
}

func TestInteropCuratorSemaphore(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	const max = 3
	cur := startCurator(t)
	a, b := connect(t), connect(t)
	sa := newSem(t, a, dir, max)

	// Curator holds two leases; Go gets the third and no more.
	cur.send(t, fmt.Sprintf("s1 hold sem %s %d", dir, max))
	cur.mustExpect(t, ctx, "s1", "held")
	cur.send(t, fmt.Sprintf("s2 hold sem %s %d", dir, max))
	cur.mustExpect(t, ctx, "s2", "held")
	l, err := sa.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("third lease: %v", err)
	}
	if _, err := sa.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("fourth lease: %v, want ErrNoLease", err)
	}
	cur.send(t, fmt.Sprintf("t1 try sem %s %d", dir, max))
	if f := cur.mustExpect(t, ctx, "t1", "tried"); f[0] != "false" {
		t.Fatal("Curator got a fourth lease")
	}
	// A Go acquirer waits for a lease and gets Curator's.
	got := make(chan *lock.Lease, 1)
	sb := newSem(t, b, dir, max)
	go func() {
		l, err := sb.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	queued(t, a, dir+"/leases", 4)
	cur.send(t, "s1 release")
	cur.mustExpect(t, ctx, "s1", "released")
	if l4 := <-got; l4 != nil {
		l4.Release(ctx)
	}
	cur.send(t, "s2 release")
	cur.mustExpect(t, ctx, "s2", "released")
	l.Release(ctx)

	const rounds = 8
	c := newChecker(t, a, chk, "sem", max)
	cur.send(t, fmt.Sprintf("L loop sem %s %d 3 %d %s", dir, max, rounds, chk))
	var acqs []acquirer
	for _, s := range []*lock.Semaphore{sa, sa, sb, newSem(t, b, dir, max)} {
		acqs = append(acqs, s.Acquire)
	}
	res := goLoop(ctx, "go", c, rounds, acqs...)
	res.check(t, "zkcoord", 4*rounds)
	cur.checkLoop(t, ctx, "L", 3*rounds)
	checkFree(t, c)
}

// TestInteropCuratorSemaphoreAcquireN: leases taken several at once by
// Curator's acquire(qty) and by AcquireN count against one limit, and
// AcquireN waits for all its leases while Curator's acquirers queue behind
// it; in loops, Curator's acquirers and Go's AcquireN never hold more than
// MaxLeases together.
func TestInteropCuratorSemaphoreAcquireN(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	const max = 4
	cur := startCurator(t)
	a, b := connect(t), connect(t)
	sa, sb := newSem(t, a, dir, max), newSem(t, b, dir, max)

	cur.send(t, fmt.Sprintf("s1 holdn %s %d 2", dir, max))
	if f := cur.mustExpect(t, ctx, "s1", "held"); len(strings.Split(f[0], ",")) != 2 {
		t.Fatalf("Curator holds %v, want two leases", f)
	}
	if _, err := sa.TryAcquireN(ctx, 3); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("three leases beside Curator's two: %v, want ErrNoLease", err)
	}
	ma, err := sa.AcquireN(ctx, 2)
	if err != nil {
		t.Fatalf("two leases beside Curator's two: %v", err)
	}
	cur.send(t, fmt.Sprintf("t1 try sem %s %d", dir, max))
	if f := cur.mustExpect(t, ctx, "t1", "tried"); f[0] != "false" {
		t.Fatal("Curator got a fifth lease")
	}
	// b waits for three, holding the acquirers' mutex; a Curator acquirer
	// queues behind it.
	mb := make(chan *lock.MultiLease, 1)
	go func() {
		ml, err := sb.AcquireN(ctx, 3)
		if err != nil {
			t.Error(err)
		}
		mb <- ml
	}()
	queued(t, a, dir+"/leases", 7)
	cur.send(t, fmt.Sprintf("s2 hold sem %s %d", dir, max))
	queued(t, a, dir+"/locks", 2)
	if err := ma.Release(ctx); err != nil {
		t.Fatal(err)
	}
	queued(t, a, dir+"/leases", 5)
	if len(mb) > 0 || cur.pending("s2") {
		t.Fatal("a lease granted beyond the limit")
	}
	cur.send(t, "s1 release")
	cur.mustExpect(t, ctx, "s1", "released")
	got := <-mb
	if got == nil {
		t.FailNow()
	}
	cur.mustExpect(t, ctx, "s2", "held")
	// Released one by one.
	for _, l := range got.Leases() {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cur.send(t, "s2 release")
	cur.mustExpect(t, ctx, "s2", "released")
	queued(t, a, dir+"/leases", 0)

	const rounds = 6
	c := newChecker(t, a, chk, "sem", max)
	cur.send(t, fmt.Sprintf("L loop sem %s %d 3 %d %s", dir, max, rounds, chk))
	res := semLoop(ctx, "go", c, rounds, []*lock.Semaphore{sa, sb, newSem(t, b, dir, max)}, []int{2, 3, 1})
	res.check(t, "zkcoord", 6*rounds)
	cur.checkLoop(t, ctx, "L", 3*rounds)
	checkFree(t, c)
}

// TestInteropKazooMutex: Kazoo's Lock with extra_lock_patterns=["-lock-"]
// and Mutex exclude each other. (Curator does not order Kazoo's
// "__lock__" nodes correctly, so Curator and Kazoo must not share a lock.)
func TestInteropKazooMutex(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	kz := startKazoo(t)
	a, b := connect(t), connect(t)
	m := newMutex(t, a, dir)
	handoff(t, ctx, kz, a, dir, dir, m.TryLock, m.Lock)

	const rounds = 20
	c := newChecker(t, a, chk, "mutex", 1)
	kz.send(t, fmt.Sprintf("L loop %s 3 %d %s", dir, rounds, chk))
	res := goLoop(ctx, "go", c, rounds, mutexAcquirers(t, dir, a, a, b, b)...)
	res.check(t, "zkcoord", 4*rounds)
	kz.checkLoop(t, ctx, "L", 3*rounds)
	checkFree(t, c)
}

// TestInteropCuratorWrapped: in a directory whose sequence counter
// wrapped, Curator still lets a contender with a negative number in first
// (its order is unchanged), while a Mutex refuses with
// zkcoord.ErrSequenceWrapped and leaves no node behind; a Curator holder
// is not disturbed by a Mutex created after the wrap. Once the wrapped
// contender is gone, Curator and Mutex agree again.
func TestInteropCuratorWrapped(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	cur := startCurator(t)
	other, sess := connect(t), connect(t)
	if err := other.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	literal := func(seq string) string {
		p, err := other.Create(ctx, dir+"/_c_"+uuid.NewString()+"-lock-"+seq, nil, zkcoord.FlagEphemeral)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	wrapped := literal("-2147483648")
	last := literal("2147483647")
	m := newMutex(t, sess, dir)
	cur.send(t, "t1 try mutex "+dir+" 1")
	if f := cur.mustExpect(t, ctx, "t1", "tried"); f[0] != "false" {
		t.Error("Curator acquired behind a wrapped contender")
	}
	_, err := m.TryLock(ctx)
	checkWrapped(t, err, dir, wrapped)
	checkNodes(t, sess, dir, wrapped, last)
	if err := other.Delete(ctx, wrapped, -1); err != nil {
		t.Fatal(err)
	}
	cur.send(t, "t2 try mutex "+dir+" 1")
	if f := cur.mustExpect(t, ctx, "t2", "tried"); f[0] != "true" {
		t.Error("Curator did not acquire ahead of \"2147483647\"")
	}
	l, err := m.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock ahead of \"2147483647\": %v", err)
	}
	l.Release(ctx)

	// Curator holds; a Mutex whose create was handed a number past the
	// wrap refuses instead of taking the lock beside it.
	held := testDir(t)
	cur.send(t, "h1 hold mutex "+held+" 1")
	cur.mustExpect(t, ctx, "h1", "held")
	holder := children(t, sess, held)
	node, err := sess.Create(ctx, zkcoord.Join(held, wrappedName("lock-")), nil, zkcoord.FlagEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := lock.AdoptForTest(ctx, newMutex(t, sess, held), node); err == nil {
		l.Release(ctx)
		t.Fatal("a Mutex created after the wrap took the lock beside Curator's holder")
	} else {
		checkWrapped(t, err, held, node)
	}
	if got := children(t, sess, held); fmt.Sprint(got) != fmt.Sprint(holder) {
		t.Errorf("nodes after the refusal %v, want only Curator's %v", got, holder)
	}
	cur.send(t, "h1 release")
	cur.mustExpect(t, ctx, "h1", "released")
}

// TestInteropCuratorSemaphoreLimit: Curator's InterProcessSemaphoreV2 with
// a SharedCount limit and a Semaphore WithLimitFrom the same node share
// the leases and the limit, whichever side changes it; in loops they never
// hold more leases together than the count allows.
func TestInteropCuratorSemaphoreLimit(t *testing.T) {
	ctx := testCtx(t, 150*time.Second)
	dir, chk := testDir(t), testDir(t)+"-check"
	limitPath := dir + "-limit" // where the driver's semlimit looks
	const seed = 2
	cur := startCurator(t)
	a, b := connect(t), connect(t)
	sa, sb := newLimitedSem(t, a, dir, limitPath, seed), newLimitedSem(t, b, dir, limitPath, seed)
	limit, err := counter.New(a, limitPath)
	if err != nil {
		t.Fatal(err)
	}

	// Curator's SharedCount creates the node with its seed.
	cur.send(t, fmt.Sprintf("s1 hold semlimit %s %d", dir, seed))
	cur.mustExpect(t, ctx, "s1", "held")
	if c, err := limit.Get(ctx); err != nil || c.Value != seed {
		t.Fatalf("limit node: %+v, %v; want Curator's seed %d", c, err, seed)
	}
	l1, err := sa.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("second lease of %d: %v", seed, err)
	}
	if _, err := sb.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("third lease of %d: %v, want ErrNoLease", seed, err)
	}

	// Curator raises the limit to 3: Go takes the third lease, and Curator
	// finds no fourth.
	cur.send(t, fmt.Sprintf("c1 setcount %s 3", limitPath))
	cur.mustExpect(t, ctx, "c1", "set")
	l2, err := sb.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("third lease of 3 (set by Curator): %v", err)
	}
	cur.send(t, fmt.Sprintf("t1 try semlimit %s %d", dir, seed))
	if f := cur.mustExpect(t, ctx, "t1", "tried"); f[0] != "false" {
		t.Fatal("Curator got a fourth lease of 3")
	}

	// A Curator acquirer waits; zkcoord raises the limit to 4 and Curator
	// follows.
	cur.send(t, fmt.Sprintf("s2 hold semlimit %s %d", dir, seed))
	queued(t, a, dir+"/leases", 4)
	if cur.pending("s2") {
		t.Fatal("Curator got a fourth lease of 3")
	}
	if _, err := limit.SetCount(ctx, 4); err != nil {
		t.Fatal(err)
	}
	cur.mustExpect(t, ctx, "s2", "held")

	// Lowered to 1 by zkcoord: the four keep their leases, and neither side
	// gets another until all but one are released.
	if _, err := limit.SetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("a fifth lease under the limit 1: %v, want ErrNoLease", err)
	}
	cur.send(t, fmt.Sprintf("t2 try semlimit %s %d", dir, seed))
	if f := cur.mustExpect(t, ctx, "t2", "tried"); f[0] != "false" {
		t.Fatal("Curator got a fifth lease under the limit 1")
	}
	for _, l := range []*lock.Lease{l1, l2} {
		if err := l.Err(); err != nil {
			t.Fatalf("a Go holder lost its lease when the limit was lowered: %v", err)
		}
		l.Release(ctx)
	}
	cur.send(t, "s1 release")
	cur.mustExpect(t, ctx, "s1", "released")
	if _, err := sa.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("a second lease under the limit 1: %v, want ErrNoLease", err)
	}
	cur.send(t, "s2 release")
	cur.mustExpect(t, ctx, "s2", "released")
	queued(t, a, dir+"/leases", 0)

	const rounds, max = 6, 3
	if _, err := limit.SetCount(ctx, max); err != nil {
		t.Fatal(err)
	}
	c := newChecker(t, a, chk, "sem", max)
	cur.send(t, fmt.Sprintf("L loop semlimit %s %d 3 %d %s", dir, max, rounds, chk))
	res := semLoop(ctx, "go", c, rounds, []*lock.Semaphore{sa, sb, newLimitedSem(t, b, dir, limitPath, seed)}, []int{1, 2, 1})
	res.check(t, "zkcoord", 4*rounds)
	cur.checkLoop(t, ctx, "L", 3*rounds)
	checkFree(t, c)
}
