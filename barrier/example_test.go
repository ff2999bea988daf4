package barrier_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/barrier"
)

func connect(ctx context.Context) *zkcoord.Session {
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{
		Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
	})
	if err != nil {
		panic(err)
	}
	return sess
}

// A deployment gate: workers wait until the operator removes the barrier.
func ExampleBarrier() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	gate, err := barrier.New(sess, "/examples/deploy-gate")
	if err != nil {
		panic(err)
	}
	if err := gate.Set(ctx); err != nil {
		panic(err)
	}
	fmt.Println("gate set")

	released := make(chan struct{})
	go func() {
		defer close(released)
		if err := gate.Wait(ctx); err != nil {
			panic(err)
		}
		fmt.Println("worker released")
	}()

	if err := gate.Remove(ctx); err != nil {
		panic(err)
	}
	<-released
	// Output:
	// gate set
	// worker released
}

// Three workers start a computation together and finish it together.
func ExampleDoubleBarrier() {
	ctx := context.Background()
	const workers = 3
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		entered int
	)
	for range workers {
		sess := connect(ctx)
		defer sess.Close(ctx)
		member, err := barrier.NewDouble(sess, "/examples/batch", workers)
		if err != nil {
			panic(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := member.Enter(ctx); err != nil {
				panic(err)
			}
			mu.Lock()
			entered++
			mu.Unlock()
			// ... compute ...
			if err := member.Leave(ctx); err != nil {
				panic(err)
			}
		}()
	}
	wg.Wait()
	fmt.Println("all", entered, "workers entered and left")
	// Output:
	// all 3 workers entered and left
}
