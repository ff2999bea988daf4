package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

// waitContenders waits until the lock shows n contenders.
func waitContenders(t *testing.T, list func() ([]lock.Contender, error), n int) []lock.Contender {
	t.Helper()
	var cs []lock.Contender
	testkit.WaitFor(t, 30*time.Second, "contenders", func() error {
		var err error
		cs, err = list()
		if err == nil && len(cs) != n {
			err = errors.New("not yet")
		}
		return err
	})
	return cs
}

// lockInBackground starts Lock on m and returns its result channel.
func lockInBackground(ctx context.Context, m interface {
	Lock(context.Context) (*lock.Lease, error)
}) <-chan *lock.Lease {
	out := make(chan *lock.Lease, 1)
	go func() {
		l, _ := m.Lock(ctx)
		out <- l
	}()
	return out
}

func TestMutexContendersAndBreak(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	dir := testDir(t)
	var sessions []*zkcoord.Session
	var mutexes []*lock.Mutex
	for _, id := range []string{"a", "b", "c"} {
		s := connect(t)
		m, err := lock.NewMutex(s, dir, lock.WithData([]byte(id)))
		if err != nil {
			t.Fatal(err)
		}
		sessions, mutexes = append(sessions, s), append(mutexes, m)
	}
	held, err := mutexes[0].Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := lockInBackground(ctx, mutexes[1])
	waitContenders(t, func() ([]lock.Contender, error) { return mutexes[0].Contenders(ctx) }, 2)
	last := lockInBackground(ctx, mutexes[2])
	cs := waitContenders(t, func() ([]lock.Contender, error) { return mutexes[0].Contenders(ctx) }, 3)
	for i, c := range cs {
		if string(c.Data) != []string{"a", "b", "c"}[i] || c.Session != sessions[i].ID() || c.Holds != (i == 0) || !c.Writer {
			t.Fatalf("contender %d = %+v", i, c)
		}
		if i > 0 && c.Token <= cs[i-1].Token {
			t.Fatalf("tokens out of order: %+v", cs)
		}
	}
	if cs[0].Token != held.Token() || time.Since(cs[0].Since) > time.Minute {
		t.Fatalf("holder %+v; lease token %d", cs[0], held.Token())
	}

	// Break the holder: its lease ends, the next waiter takes the lock.
	broke, err := mutexes[2].Break(ctx)
	if err != nil || broke.Token != held.Token() {
		t.Fatalf("Break = %+v, %v", broke, err)
	}
	<-held.Done()
	if !errors.Is(held.Err(), lock.ErrNodeDeleted) {
		t.Fatalf("the broken lease's Err = %v", held.Err())
	}
	l := <-next
	if l == nil {
		t.Fatal("the next waiter did not get the lock")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if l := <-last; l == nil {
		t.Fatal("the last waiter did not get the lock")
	} else if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mutexes[0].Break(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Break of a free lock = %v", err)
	}
}

func TestRWMutexAndSemaphoreContenders(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	dir := testDir(t)
	rw := func() *lock.RWMutex {
		m, err := lock.NewRWMutex(connect(t), dir)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	r1, r2, w, r3 := rw(), rw(), rw(), rw()
	for _, m := range []*lock.RWMutex{r1, r2} {
		if _, err := m.RLock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lockInBackground(ctx, w)
	waitContenders(t, func() ([]lock.Contender, error) { return r1.Contenders(ctx) }, 3)
	go r3.RLock(ctx)
	cs := waitContenders(t, func() ([]lock.Contender, error) { return r1.Contenders(ctx) }, 4)
	var got []bool
	for _, c := range cs {
		got = append(got, c.Holds, c.Writer)
	}
	want := []bool{true, false, true, false, false, true, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("read, read, write, read: holds/writer %v; want %v", got, want)
		}
	}

	sem := func() *lock.Semaphore {
		s, err := lock.NewSemaphore(connect(t), dir+"-sem", 2)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s1, s2, s3 := sem(), sem(), sem()
	for _, s := range []*lock.Semaphore{s1, s2} {
		if _, err := s.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	go s3.Acquire(ctx)
	testkit.WaitFor(t, 30*time.Second, "a waiting acquirer", func() error {
		holders, waiting, err := s1.Holders(ctx)
		if err == nil && (len(holders) != 3 || len(waiting) != 1) {
			// The waiter's lease node is in leases/ while it waits with
			// the acquirers' mutex.
			return errors.New("not yet")
		}
		if err == nil && (!holders[0].Holds || !holders[1].Holds || holders[2].Holds) {
			return errors.New("want two holders and the waiter's node")
		}
		return err
	})
}
