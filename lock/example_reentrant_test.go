package lock_test

import (
	"context"
	"fmt"
	"log"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/lock"
)

func ExampleReentrantMutex() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	m, err := lock.NewReentrantMutex(sess, "/example/reentrant")
	if err != nil {
		log.Fatal(err)
	}
	// The holder key names who holds: here one job, whose steps lock the
	// same path again.
	const job = "job-42"
	outer, err := m.Lock(ctx, job)
	if err != nil {
		log.Fatal(err)
	}
	inner, err := m.Lock(ctx, job) // no request: counted
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(inner == outer, m.Holds(job))
	for range 2 {
		if err := m.Unlock(ctx, job); err != nil {
			log.Fatal(err)
		}
		fmt.Println(outer.Err()) // held until the last Unlock
	}
	// Output:
	// true 2
	// <nil>
	// lock: released
}

func ExampleWithLimitFrom() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	// The limit lives in a counter (Curator's SharedCount layout), which an
	// operator can change while the semaphore is in use.
	limit, err := counter.New(sess, "/example/limited-jobs-limit")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := limit.SetCount(ctx, 2); err != nil {
		log.Fatal(err)
	}
	s, err := lock.NewSemaphore(sess, "/example/limited-jobs", 1, lock.WithLimitFrom(limit.Path()))
	if err != nil {
		log.Fatal(err)
	}
	n, err := s.Limit(ctx)
	if err != nil {
		log.Fatal(err)
	}
	leases, err := s.AcquireN(ctx, n)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(leases.Leases()), "leases held")
	if err := leases.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: 2 leases held
}
