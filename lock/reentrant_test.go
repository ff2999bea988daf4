package lock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

func newReentrant(t testing.TB, sess *zkcoord.Session, dir string) *lock.ReentrantMutex {
	t.Helper()
	m, err := lock.NewReentrantMutex(sess, dir)
	if err != nil {
		t.Fatalf("NewReentrantMutex: %v", err)
	}
	return m
}

// A holder key locks again while it holds, with one node and the outer
// hold's token; other keys, and other clients, wait until its last Unlock.
func TestReentrantMutex(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b := connect(t), connect(t)
	dir := testDir(t)
	m := newReentrant(t, a, dir)

	outer, err := m.Lock(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	inner, err := m.TryLock(ctx, "x")
	if err != nil {
		t.Fatalf("re-entering TryLock: %v", err)
	}
	again, err := m.Lock(ctx, "x")
	if err != nil {
		t.Fatalf("re-entering Lock: %v", err)
	}
	if inner != outer || again != outer || inner.Token() != outer.Token() {
		t.Fatal("a re-entered hold has a lease other than the outer one")
	}
	if n := m.Holds("x"); n != 3 {
		t.Fatalf("Holds = %d, want 3", n)
	}
	if c := children(t, a, dir); len(c) != 1 || !curatorMutexNode.MatchString(c[0]) {
		t.Fatalf("lock directory holds %v, want one Mutex node", c)
	}

	// Another key, through the same value, and another client's Mutex,
	// contend.
	if _, err := m.TryLock(ctx, "y"); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock by another key: %v, want ErrLocked", err)
	}
	if _, err := newMutex(t, b, dir).TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("a Mutex's TryLock: %v, want ErrLocked", err)
	}
	got := make(chan *lock.Lease, 1)
	go func() {
		l, err := m.Lock(ctx, "y")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	queued(t, a, dir, 2)
	for i := range 2 {
		if err := m.Unlock(ctx, "x"); err != nil {
			t.Fatalf("inner Unlock %d: %v", i, err)
		}
		if outer.Err() != nil || len(got) > 0 {
			t.Fatalf("the lock was released by inner Unlock %d", i)
		}
	}
	queued(t, a, dir, 2)
	if err := m.Unlock(ctx, "x"); err != nil {
		t.Fatalf("last Unlock: %v", err)
	}
	if !errors.Is(outer.Err(), lock.ErrReleased) {
		t.Fatalf("after the last Unlock the lease says %v, want ErrReleased", outer.Err())
	}
	ly := <-got
	if ly == nil {
		t.FailNow()
	}
	if ly.Token() <= outer.Token() {
		t.Errorf("next holder's token %d not above %d", ly.Token(), outer.Token())
	}
	if err := m.Unlock(ctx, "x"); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Unlock by a key that holds nothing: %v, want ErrNotHeld", err)
	}
	if n := m.Holds("x"); n != 0 {
		t.Fatalf("Holds after the last Unlock = %d, want 0", n)
	}

	// A key whose first acquisition is still running cannot enter.
	waiting := make(chan error, 1)
	go func() {
		_, err := m.Lock(ctx, "x")
		waiting <- err
	}()
	queued(t, a, dir, 2)
	if _, err := m.Lock(ctx, "x"); !errors.Is(err, lock.ErrAlreadyHeld) {
		t.Fatalf("Lock by a key still acquiring: %v, want ErrAlreadyHeld", err)
	}
	if err := m.Unlock(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	queued(t, a, dir, 0)
}

// A lost hold is not re-entered: Lock reports the loss, every Unlock
// counts down, and the key may lock anew once they are done.
func TestReentrantMutexLost(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	a, b := connect(t), connect(t)
	dir := testDir(t)
	m := newReentrant(t, a, dir)
	l, err := m.Lock(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lock(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := newMutex(t, b, dir).Break(ctx); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if _, err := m.Lock(ctx, "x"); !errors.Is(err, lock.ErrLost) || !errors.Is(err, lock.ErrNodeDeleted) {
		t.Fatalf("Lock on a lost hold: %v, want ErrLost and ErrNodeDeleted", err)
	}
	for i := range 2 {
		if err := m.Unlock(ctx, "x"); !errors.Is(err, lock.ErrLost) {
			t.Fatalf("Unlock %d of a lost hold: %v, want ErrLost", i, err)
		}
	}
	if n := m.Holds("x"); n != 0 {
		t.Fatalf("Holds = %d, want 0", n)
	}
	l2, err := m.Lock(ctx, "x")
	if err != nil {
		t.Fatalf("Lock anew: %v", err)
	}
	if l2 == l || l2.Token() <= l.Token() {
		t.Fatal("the new hold reuses the lost lease")
	}
	if err := m.Unlock(ctx, "x"); err != nil {
		t.Fatal(err)
	}
}
