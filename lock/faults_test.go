package lock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/testkit"
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

// TestFaultWrappedSequenceNumbers creates, as literal names, the nodes
// ZooKeeper produces after its 32-bit child counter wraps, and checks that
// contenders are ordered as Curator orders them: by the text after the
// lock name, as strings, so "-2147483648" comes before "0000000003" and
// "2147483647" after it.
func TestFaultWrappedSequenceNumbers(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	dir := testDir(t)
	other, sess := connect(t), connect(t)
	if err := other.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	literal := func(name string) string {
		p, err := other.Create(ctx, zkcoord.Join(dir, "_c_"+uuid.NewString()+"-"+name), nil, zkcoord.FlagEphemeral)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	wrapped := literal("lock--2147483648")
	literal("lock-2147483647")
	m := newMutex(t, sess, dir)
	if _, err := m.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock behind a wrapped (negative) contender: %v, want ErrLocked", err)
	}
	queued(t, sess, dir, 2)
	got := make(chan error, 1)
	go func() {
		l, err := m.Lock(ctx)
		if err == nil {
			if !strings.Contains(l.Path(), "-lock-00") {
				err = fmt.Errorf("unexpected node %s", l.Path())
			}
		}
		got <- err
	}()
	testkit.WaitFor(t, 30*time.Second, "waiter watching the wrapped node", func() error {
		w, err := cluster.Server(0).Wchc(ctx)
		if err != nil {
			return err
		}
		for _, p := range w[sess.ID()] {
			if p == wrapped {
				return nil
			}
		}
		return fmt.Errorf("session watches %v", w[sess.ID()])
	})
	select {
	case err := <-got:
		t.Fatalf("acquired while a wrapped contender sorts first: %v", err)
	default:
	}
	if err := other.Delete(ctx, wrapped, -1); err != nil {
		t.Fatal(err)
	}
	// "2147483647" sorts after our "00000000nn": we hold now.
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// Read/write: a wrapped writer blocks readers, a wrapped reader does not.
	rwDir := dir + "-rw"
	if err := other.EnsurePath(ctx, rwDir); err != nil {
		t.Fatal(err)
	}
	p, err := other.Create(ctx, rwDir+"/_c_"+uuid.NewString()+"-__READ__-2147483648", nil, zkcoord.FlagEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	rw := newRW(t, sess, rwDir)
	l, err := rw.TryRLock(ctx)
	if err != nil {
		t.Fatalf("TryRLock beside a wrapped reader: %v", err)
	}
	l.Release(ctx)
	if _, err := rw.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock behind a wrapped reader: %v, want ErrLocked", err)
	}
	other.Delete(ctx, p, -1)
	if _, err := other.Create(ctx, rwDir+"/_c_"+uuid.NewString()+"-__WRIT__-000000001", nil, zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	if _, err := rw.TryRLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryRLock behind a wrapped writer: %v, want ErrLocked", err)
	}
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
