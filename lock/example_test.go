package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

func ExampleMutex() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	m, err := lock.NewMutex(sess, "/example/mutex")
	if err != nil {
		log.Fatal(err)
	}
	lease, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Do the work while the lease lasts; stop as soon as it is lost.
	work := time.After(10 * time.Millisecond)
	select {
	case <-work:
		fmt.Println("work done under the lock")
	case <-lease.Done():
		fmt.Println("lock lost:", lease.Err())
	}
	if err := m.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(lease.Err())
	// Output:
	// work done under the lock
	// lock: released
}

func ExampleMutex_TryLock() {
	ctx := context.Background()
	a, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close(ctx)
	b, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close(ctx)

	ma, _ := lock.NewMutex(a, "/example/trylock")
	mb, _ := lock.NewMutex(b, "/example/trylock")
	held, err := ma.TryLock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = mb.TryLock(ctx)
	fmt.Println(errors.Is(err, lock.ErrLocked))
	held.Release(ctx)
	again, err := mb.TryLock(ctx)
	fmt.Println(err)
	again.Release(ctx)
	// Output:
	// true
	// <nil>
}

// A fenced write succeeds only while the lease's node exists, so a holder
// that lost its lock without noticing (a long GC pause, say) cannot
// overwrite the work of the next holder.
func ExampleLease_Fence() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)
	if err := sess.EnsurePath(ctx, "/example/fenced-config"); err != nil {
		log.Fatal(err)
	}

	m, _ := lock.NewMutex(sess, "/example/fence")
	lease, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_, err = sess.GuardedSet(ctx, lease.Fence(), "/example/fenced-config", []byte("v1"), -1)
	fmt.Println("while held:", err)
	m.Unlock(ctx)
	_, err = sess.GuardedSet(ctx, lease.Fence(), "/example/fenced-config", []byte("v2"), -1)
	fmt.Println("after release:", errors.Is(err, zkcoord.ErrNotOwner))
	// Output:
	// while held: <nil>
	// after release: true
}

func ExampleRWMutex() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	// Two readers share the lock; a writer has to wait for both.
	r1, _ := lock.NewRWMutex(sess, "/example/rw")
	r2, _ := lock.NewRWMutex(sess, "/example/rw")
	w, _ := lock.NewRWMutex(sess, "/example/rw")
	if _, err := r1.RLock(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := r2.RLock(ctx); err != nil {
		log.Fatal(err)
	}
	_, err = w.TryLock(ctx)
	fmt.Println("writer while reading:", errors.Is(err, lock.ErrLocked))
	r1.RUnlock(ctx)
	r2.RUnlock(ctx)
	if _, err := w.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("writer in")
	w.Unlock(ctx)
	// Output:
	// writer while reading: true
	// writer in
}

// A writer that goes on reading what it wrote keeps the lock: no other
// writer can get in between, and readers that waited get in at once.
func ExampleRWMutex_Downgrade() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	rw, _ := lock.NewRWMutex(sess, "/example/downgrade")
	reader, _ := lock.NewRWMutex(sess, "/example/downgrade")
	writer, _ := lock.NewRWMutex(sess, "/example/downgrade")
	if _, err := rw.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	// ... write ...
	if _, err := rw.Downgrade(ctx); err != nil {
		log.Fatal(err)
	}
	r, err := reader.TryRLock(ctx)
	fmt.Println("another reader:", err)
	_, err = writer.TryLock(ctx)
	fmt.Println("a writer:", errors.Is(err, lock.ErrLocked))
	// ... read ...
	rw.RUnlock(ctx)
	r.Release(ctx)
	// Output:
	// another reader: <nil>
	// a writer: true
}

func ExampleSemaphore() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	// At most two leases at a time, across every client of the path.
	s, err := lock.NewSemaphore(sess, "/example/semaphore", 2)
	if err != nil {
		log.Fatal(err)
	}
	l1, _ := s.Acquire(ctx)
	l2, _ := s.Acquire(ctx)
	_, err = s.TryAcquire(ctx)
	fmt.Println("third lease:", errors.Is(err, lock.ErrNoLease))
	l1.Release(ctx)
	l3, err := s.Acquire(ctx)
	fmt.Println("after a release:", err)
	l2.Release(ctx)
	l3.Release(ctx)
	// Output:
	// third lease: true
	// after a release: <nil>
}

// A job that needs three of the five slots takes them all at once, or
// waits for them without holding any.
func ExampleSemaphore_AcquireN() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	s, _ := lock.NewSemaphore(sess, "/example/slots", 5)
	big, err := s.AcquireN(ctx, 3)
	if err != nil {
		log.Fatal(err)
	}
	_, err = s.TryAcquireN(ctx, 3)
	fmt.Println("three more:", errors.Is(err, lock.ErrNoLease))
	// Give one slot back early, the other two at the end.
	big.Leases()[0].Release(ctx)
	n, _ := s.Leases(ctx)
	fmt.Println("held:", n)
	big.Release(ctx)
	// Output:
	// three more: true
	// held: 2
}

func ExampleMultiLock() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	// Move money between two accounts: hold both accounts' locks.
	from, _ := lock.NewMutex(sess, "/example/accounts/b")
	to, _ := lock.NewMutex(sess, "/example/accounts/a")
	both, err := lock.NewMultiLock(from, to)
	if err != nil {
		log.Fatal(err)
	}
	held, err := both.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range held.Leases() { // in path order, whatever order given
		fmt.Println(zkcoord.Parent(l.Path()))
	}
	if err := held.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// /example/accounts/a
	// /example/accounts/b
}

func ExampleMutex_Contenders() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	m, _ := lock.NewMutex(sess, "/example/inspected", lock.WithData([]byte("report-job")))
	lease, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(ctx)
	cs, err := m.Contenders(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range cs {
		fmt.Println(string(c.Data), "holds:", c.Holds, "token matches:", c.Token == lease.Token())
	}
	// Output:
	// report-job holds: true token matches: true
}
