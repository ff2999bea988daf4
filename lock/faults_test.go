package lock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

// acquisition is what a contender saw at the moment it acquired.
type acquisition struct {
	lease         *lock.Lease
	err           error
	oldDoneClosed bool // the previous holder's Done was already closed
}

// acquireAfter runs acquire in the background; on acquiring it records
// whether prev's Done had already closed.
func acquireAfter(ctx context.Context, acquire func(context.Context) (*lock.Lease, error), prev *lock.Lease) <-chan acquisition {
	out := make(chan acquisition, 1)
	go func() {
		l, err := acquire(ctx)
		out <- acquisition{lease: l, err: err, oldDoneClosed: closed(prev.Done())}
	}()
	return out
}

// lockAfter locks m in the background, as acquireAfter.
func lockAfter(ctx context.Context, m *lock.Mutex, prev *lock.Lease) <-chan acquisition {
	return acquireAfter(ctx, m.Lock, prev)
}

// awaitAcquisition waits for the contender started by acquireAfter.
func awaitAcquisition(t *testing.T, ctx context.Context, got <-chan acquisition) acquisition {
	t.Helper()
	select {
	case acq := <-got:
		if acq.err != nil {
			t.Fatalf("next contender: %v", acq.err)
		}
		return acq
	case <-ctx.Done():
		t.Fatal("next contender never acquired")
		return acquisition{}
	}
}

// waitState waits until the Session reports state st.
func waitState(t *testing.T, sess *zkcoord.Session, st zkcoord.State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for c := range sess.Watch(ctx) {
		if c.State == st {
			return
		}
	}
	t.Fatalf("session never reached %v (now %v)", st, sess.State())
}

// acquirerOn makes an acquirer of one lock for a Session.
type acquirerOn func(t *testing.T, sess *zkcoord.Session) func(context.Context) (*lock.Lease, error)

// partitionedHolderStopsFirst: the holder, connected through a proxy, is
// cut off by a blackhole longer than its session timeout while a second
// Session waits, with its node among the waiting nodes of waitDir. The
// holder's lease must end (Session Lost) before the server expires the
// session and the waiter acquires; the waiter checks that order at the
// moment it acquires. fenced is a node both may write through guarded
// writes.
func partitionedHolderStopsFirst(t *testing.T, on acquirerOn, waitDir string, waiting int, fenced string) {
	ctx := testCtx(t, 90*time.Second)
	proxy := cluster.NewProxy(t)
	a := connect(t, withServers(proxy.Servers()), withTimeout(4*time.Second))
	b := connect(t)
	la, err := on(t, a)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := acquireAfter(ctx, on(t, b), la)
	queued(t, b, waitDir, waiting)

	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	acq := awaitAcquisition(t, ctx, got)
	if !acq.oldDoneClosed {
		t.Fatal("the next contender acquired while the partitioned holder's Done was still open")
	}
	if !errors.Is(la.Err(), lock.ErrLost) || !errors.Is(la.Err(), zkcoord.ErrSessionLost) {
		t.Errorf("old lease Err %v, want ErrLost and ErrSessionLost", la.Err())
	}
	if acq.lease.Token() <= la.Token() {
		t.Errorf("new token %d not above old %d", acq.lease.Token(), la.Token())
	}
	// A resource that checks fences refuses the old holder.
	if _, err := b.GuardedSet(ctx, la.Fence(), fenced, []byte("stale"), -1); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Errorf("write fenced by the old lease: %v, want ErrNotOwner", err)
	}
	if _, err := b.GuardedSet(ctx, acq.lease.Fence(), fenced, []byte("fresh"), -1); err != nil {
		t.Errorf("write fenced by the new lease: %v", err)
	}
	acq.lease.Release(ctx)
}

// TestFaultPartitionedHolderStopsFirst: a partitioned Mutex holder stops
// before the next contender acquires.
func TestFaultPartitionedHolderStopsFirst(t *testing.T) {
	dir := testDir(t)
	partitionedHolderStopsFirst(t, func(t *testing.T, sess *zkcoord.Session) func(context.Context) (*lock.Lease, error) {
		return newMutex(t, sess, dir).Lock
	}, dir, 2, dir)
}

// TestFaultPartitionedWriterStopsFirst: a partitioned RWMutex writer stops
// before the next writer acquires.
func TestFaultPartitionedWriterStopsFirst(t *testing.T) {
	dir := testDir(t)
	partitionedHolderStopsFirst(t, func(t *testing.T, sess *zkcoord.Session) func(context.Context) (*lock.Lease, error) {
		return newRW(t, sess, dir).Lock
	}, dir, 2, dir)
}

// TestFaultPartitionedLeaseHolderStopsFirst: the partitioned holder of a
// Semaphore's only lease stops before the next acquirer gets it.
func TestFaultPartitionedLeaseHolderStopsFirst(t *testing.T) {
	dir := testDir(t)
	partitionedHolderStopsFirst(t, func(t *testing.T, sess *zkcoord.Session) func(context.Context) (*lock.Lease, error) {
		return newSem(t, sess, dir, 1).Acquire
	}, dir+"/leases", 2, dir)
}

// TestFaultForcedExpiry: the server expires the holder's session behind its
// back. ZooKeeper deletes the node at once, so the next contender may
// acquire before the old client hears of it: no client can order that, and
// that is what fencing is for. What does hold: the old lease ends, with
// ErrSessionExpired, and once the next contender has acquired, a write
// guarded by the old lease fails while one guarded by the new lease
// succeeds.
func TestFaultForcedExpiry(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	a, b := connect(t), connect(t)
	la, err := newMutex(t, a, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := lockAfter(ctx, newMutex(t, b, dir), la)
	queued(t, b, dir, 2)
	if err := cluster.ExpireSession(ctx, a.ID(), a.Password()); err != nil {
		t.Fatal(err)
	}
	acq := awaitAcquisition(t, ctx, got)
	t.Logf("old holder's Done closed when the next acquired: %v (not guaranteed)", acq.oldDoneClosed)
	// After the new holder acquired, a write on behalf of the old one is
	// refused; the new holder's goes through.
	if _, err := b.GuardedSet(ctx, la.Fence(), dir, []byte("stale"), -1); !errors.Is(err, zkcoord.ErrNotOwner) {
		t.Errorf("write fenced by the expired lease: %v, want ErrNotOwner", err)
	}
	if _, err := b.GuardedSet(ctx, acq.lease.Fence(), dir, []byte("fresh"), -1); err != nil {
		t.Errorf("write fenced by the new lease: %v", err)
	}
	select {
	case <-la.Done():
	case <-ctx.Done():
		t.Fatal("expired holder's Done never closed")
	}
	if !errors.Is(la.Err(), lock.ErrLost) || !errors.Is(la.Err(), zkcoord.ErrSessionExpired) {
		t.Errorf("old lease Err %v, want ErrLost and ErrSessionExpired", la.Err())
	}
	if _, err := a.GuardedSet(ctx, la.Fence(), dir, nil, -1); err == nil {
		t.Error("guarded write through the expired session succeeded")
	}
	if acq.lease.Token() <= la.Token() {
		t.Errorf("new token %d not above old %d", acq.lease.Token(), la.Token())
	}
	acq.lease.Release(ctx)
}

// TestFaultHolderKeepsLockThroughDisconnect: a short disconnection
// (shorter than Lost) does not end a lease, and a release made while
// disconnected completes after reconnecting.
func TestFaultHolderKeepsLockThroughDisconnect(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	proxy := cluster.NewProxy(t)
	a := connect(t, withServers(proxy.Servers()), withTimeout(10*time.Second))
	b := connect(t)
	m := newMutex(t, a, dir)
	la, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, a, zkcoord.Suspended)
	if closed(la.Done()) {
		t.Fatalf("lease ended on a mere disconnection: %v", la.Err())
	}
	released := make(chan error, 1)
	go func() { released <- m.Unlock(ctx) }()
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := <-released; err != nil {
		t.Fatalf("Unlock across a disconnection: %v", err)
	}
	if !errors.Is(la.Err(), lock.ErrReleased) {
		t.Errorf("Err %v, want ErrReleased", la.Err())
	}
	queued(t, b, dir, 0)
}

// TestFaultWaiterThroughDisconnect: a waiter whose connection drops while
// the holder releases still acquires once it reconnects (its watch is
// restored by the client, and fires for what happened meanwhile).
func TestFaultWaiterThroughDisconnect(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	proxy := cluster.NewProxy(t)
	a := connect(t)
	b := connect(t, withServers(proxy.Servers()), withTimeout(10*time.Second))
	la, err := newMutex(t, a, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := lockAfter(ctx, newMutex(t, b, dir), la)
	queued(t, a, dir, 2)
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, zkcoord.Suspended)
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	acq := <-got
	if acq.err != nil {
		t.Fatalf("waiter after reconnecting: %v", acq.err)
	}
	acq.lease.Release(ctx)
}

// TestFaultNoOrphanWhenCreateOutlivesCtx: a Lock whose ctx ends while its
// create request is still on the wire leaves no node once the request
// lands.
func TestFaultNoOrphanWhenCreateOutlivesCtx(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dir := testDir(t)
	admin := connect(t)
	if err := admin.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	proxy := cluster.NewProxy(t)
	a := connect(t, withServers(proxy.Servers()), withTimeout(10*time.Second))
	if err := proxy.Delay(400 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := newMutex(t, a, dir).Lock(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with a ctx shorter than the round trip: %v", err)
	}
	// The create reaches the server after the ctx ended; it must be
	// cleaned up.
	testkit.WaitFor(t, 30*time.Second, "the late create to land", func() error {
		_, st, err := admin.Get(ctx, dir)
		if err != nil {
			return err
		}
		if st.Cversion == 0 {
			return fmt.Errorf("no child created yet")
		}
		return nil
	})
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	queued(t, admin, dir, 0)
}

// wrappedName is the name of a contender node, for the lock name
// lockName, as ZooKeeper names the first one created after the directory's
// sequence counter wrapped past 2147483647. Tests create such nodes by
// name: getting the real counter there takes 2^31 creates and deletes.
func wrappedName(lockName string) string {
	return "_c_" + uuid.NewString() + "-" + lockName + "-2147483648"
}

// checkWrapped checks that err is the refusal of a wrapped directory,
// naming the directory and the contender with the negative number.
func checkWrapped(t *testing.T, err error, dir, node string) {
	t.Helper()
	if !errors.Is(err, zkcoord.ErrSequenceWrapped) {
		t.Fatalf("err = %v, want zkcoord.ErrSequenceWrapped", err)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, zkcoord.Base(node)) {
		t.Errorf("error %q does not name the directory %s and the node %s", msg, dir, zkcoord.Base(node))
	}
}

// checkNodes checks that dir holds exactly the nodes want (paths).
func checkNodes(t *testing.T, sess *zkcoord.Session, dir string, want ...string) {
	t.Helper()
	got := children(t, sess, dir)
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = zkcoord.Base(w)
	}
	slices.Sort(got)
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// TestFaultWrappedSequenceNumbers: the first contender created after the
// lock directory's sequence counter wrapped is named "…-lock--2147483648",
// which sorts before the holder's "…-lock-00000000nn" in the order
// Curator and Kazoo use. It must not take the lock beside the holder: it
// refuses with ErrSequenceWrapped, naming the directory, and deletes its
// node; the holder keeps its lock.
func TestFaultWrappedSequenceNumbers(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	dir := testDir(t)
	a, b := connect(t), connect(t)
	held, err := newMutex(t, a, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What b's sequential create would have made, on b's Session.
	node, err := b.Create(ctx, zkcoord.Join(dir, wrappedName("lock-")), nil, zkcoord.FlagEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lock.AdoptForTest(ctx, newMutex(t, b, dir), node)
	if err == nil {
		l.Release(ctx)
		t.Fatalf("the contender created after the wrap (%s) took the lock beside its holder (%s)", node, held.Path())
	}
	checkWrapped(t, err, dir, node)
	checkNodes(t, a, dir, held.Path())
	if err := held.Err(); err != nil {
		t.Fatalf("the holder lost its lock: %v", err)
	}
	if _, err := a.GuardedSet(ctx, held.Fence(), dir, nil, -1); err != nil {
		t.Fatalf("the holder's guarded write: %v", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestFaultWrappedForeignContender: a contender with a negative number
// that another library left (Curator's, or Kazoo's, whose own Lock does
// not see "-999999999" to "-000000001") makes every zkcoord contender
// refuse, TryLock and Lock alike, leaving no node behind; so does one that
// appears while a contender from before the wrap waits.
func TestFaultWrappedForeignContender(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	other, sess := connect(t), connect(t)
	literal := func(dir, name string) string {
		if err := other.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		p, err := other.Create(ctx, zkcoord.Join(dir, name), nil, zkcoord.FlagEphemeral)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	dir := testDir(t)
	curator := literal(dir, wrappedName("lock-"))
	last := literal(dir, "_c_"+uuid.NewString()+"-lock-2147483647")
	m := newMutex(t, sess, dir)
	_, err := m.TryLock(ctx)
	checkWrapped(t, err, dir, curator)
	_, err = m.Lock(ctx)
	checkWrapped(t, err, dir, curator)
	checkNodes(t, sess, dir, curator, last)

	kazooDir := testDir(t)
	kazoo := literal(kazooDir, "0123456789abcdef0123456789abcdef__lock__-000000001")
	_, err = newMutex(t, sess, kazooDir).Lock(ctx)
	checkWrapped(t, err, kazooDir, kazoo)
	checkNodes(t, sess, kazooDir, kazoo)

	// A waiter from before the wrap, woken when the holder releases,
	// finds the wrapped contender and refuses too.
	waitDir := testDir(t)
	held, err := newMutex(t, other, waitDir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := lockAfter(ctx, newMutex(t, sess, waitDir), held)
	queued(t, sess, waitDir, 2)
	wrapped := literal(waitDir, wrappedName("lock-"))
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	var w acquisition
	select {
	case w = <-got:
	case <-ctx.Done():
		t.Fatal("the waiter neither took the lock nor refused")
	}
	if w.err == nil {
		t.Fatalf("the waiter took the lock beside the wrapped contender %s", wrapped)
	}
	checkWrapped(t, w.err, waitDir, wrapped)
	checkNodes(t, sess, waitDir, wrapped)
}

// TestFaultWrappedRWMutexAndSemaphore: the same refusal on the other
// Curator-ordered layouts. A reader created after the wrap would sort
// before a writer that holds the lock and read beside it; a wrapped node
// in a Semaphore's locks/ (its acquirers' mutex) stops acquirers.
func TestFaultWrappedRWMutexAndSemaphore(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b := connect(t), connect(t)

	dir := testDir(t)
	writer, err := newRW(t, a, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node, err := b.Create(ctx, zkcoord.Join(dir, wrappedName("__READ__")), nil, zkcoord.FlagEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	rw := newRW(t, b, dir)
	l, err := lock.AdoptForTest(ctx, rw, node)
	if err == nil {
		l.Release(ctx)
		t.Fatalf("a reader created after the wrap read beside the writer %s", writer.Path())
	}
	checkWrapped(t, err, dir, node)
	checkNodes(t, a, dir, writer.Path())
	if err := writer.Err(); err != nil {
		t.Fatalf("the writer lost its lock: %v", err)
	}
	if err := writer.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// A wrapped reader or writer left by another library.
	for _, name := range []string{wrappedName("__READ__"), "_c_" + uuid.NewString() + "-__WRIT__-000000001"} {
		dir := testDir(t)
		if err := a.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		p, err := a.Create(ctx, zkcoord.Join(dir, name), nil, zkcoord.FlagEphemeral)
		if err != nil {
			t.Fatal(err)
		}
		rw := newRW(t, b, dir)
		_, err = rw.TryRLock(ctx)
		checkWrapped(t, err, dir, p)
		_, err = rw.Lock(ctx)
		checkWrapped(t, err, dir, p)
		checkNodes(t, a, dir, p)
	}

	path := testDir(t)
	if err := a.EnsurePath(ctx, path+"/locks"); err != nil {
		t.Fatal(err)
	}
	p, err := a.Create(ctx, zkcoord.Join(path+"/locks", wrappedName("lock-")), nil, zkcoord.FlagEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	s := newSem(t, b, path, 2)
	_, err = s.TryAcquire(ctx)
	checkWrapped(t, err, path+"/locks", p)
	_, err = s.Acquire(ctx)
	checkWrapped(t, err, path+"/locks", p)
	checkNodes(t, a, path+"/locks", p)
	checkNodes(t, a, path+"/leases")
}

// TestFaultForeignChildren: nodes in a lock directory that are not
// contenders (persistent, odd names, a semaphore's lease name, with
// children of their own) are ignored; contender names of another kind of
// lock are not (see TestOtherKindRefused).
func TestFaultForeignChildren(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	dir := testDir(t)
	admin, a, b := connect(t), connect(t), connect(t)
	if err := admin.EnsurePath(ctx, dir+"/nested/child"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{
		"readme", "lock-", "lock-abc", "-lock-", "0000000000", "lock-0000000001-x",
		"lease-0000000003", "lock--0000000001",
	} {
		if _, err := admin.Create(ctx, zkcoord.Join(dir, n), []byte{0xff, 0, 0xfe}, 0); err != nil {
			t.Fatal(err)
		}
	}
	ma, mb := newMutex(t, a, dir), newMutex(t, b, dir)
	la, err := ma.TryLock(ctx)
	if err != nil {
		t.Fatalf("TryLock among foreign children: %v", err)
	}
	if _, err := mb.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("second TryLock: %v, want ErrLocked", err)
	}
	got := lockAfter(ctx, mb, la)
	queued(t, admin, dir, 11)
	la.Release(ctx)
	acq := <-got
	if acq.err != nil {
		t.Fatal(acq.err)
	}
	acq.lease.Release(ctx)

	// Persistent nodes named as a read/write lock's contenders: a read/write
	// lock takes them for its own, and waits behind the writer among
	// them; a Mutex refuses the directory and leaves nothing behind.
	for _, n := range []string{"x__READ__0000000001", "x__WRIT__0000000002"} {
		if _, err := admin.Create(ctx, zkcoord.Join(dir, n), nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ma.Lock(ctx); !errors.Is(err, lock.ErrOtherKind) {
		t.Fatalf("Lock among a read/write lock's contenders: %v, want ErrOtherKind", err)
	}
	if c := children(t, admin, dir); len(c) != 11 {
		t.Fatalf("children after the refusal %v, want the 11 foreign ones", c)
	}
	if _, err := newRW(t, a, dir).TryRLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryRLock behind a foreign-named writer: %v, want ErrLocked", err)
	}
}
