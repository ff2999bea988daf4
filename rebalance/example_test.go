package rebalance_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/rebalance"
)

// Example shares the partitions of a topic between the consumers of a
// group. Each consumer runs the partitions it is given until they are taken
// away; here a single consumer gets all three.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: exampleServers()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close(ctx)

	const root, group = "/example/rebalance", "orders"
	for _, p := range []string{"partition-0", "partition-1", "partition-2"} {
		if err := rebalance.AddResource(ctx, sess, zkcoord.Join(root, group), p); err != nil {
			fmt.Println(err)
			return
		}
	}

	var (
		mu      sync.Mutex
		stopped = map[string]chan struct{}{} // per running partition
		started = make(chan string, 3)
	)
	h := rebalance.Handler{
		Assigned: func(ctx context.Context, a rebalance.Assignment) error {
			done := make(chan struct{})
			mu.Lock()
			stopped[a.Resource] = done
			mu.Unlock()
			go func() { // consume, passing a.Token along, until taken away
				defer close(done)
				<-ctx.Done()
			}()
			started <- a.Resource
			return nil
		},
		Unassigned: func(a rebalance.Assignment, cause error) error {
			mu.Lock()
			done := stopped[a.Resource]
			delete(stopped, a.Resource)
			mu.Unlock()
			<-done // every use of the partition has stopped
			return nil
		},
	}
	c, err := rebalance.Start(ctx, sess, zkcoord.Join(root, group), h)
	if err != nil {
		fmt.Println(err)
		return
	}
	var got []string
	for range 3 {
		got = append(got, <-started)
	}
	slices.Sort(got)
	fmt.Println("running:", got)

	if err := c.Stop(ctx); err != nil {
		fmt.Println(err)
	}
	mu.Lock()
	fmt.Println("still running after Stop:", len(stopped))
	mu.Unlock()
	// Output:
	// running: [partition-0 partition-1 partition-2]
	// still running after Stop: 0
}

// exampleServers returns the addresses of the test server.
func exampleServers() []string { return cluster.Servers() }

// ExampleWithRecoveryEvents starts a consumer that opens its own Sessions
// and, after losing one, joins again on a new Session as a new member
// (zkcoord.Supervise runs it); its recovery events are logged. By the time
// Stop returns every event the client sent is in the channel.
func ExampleWithRecoveryEvents() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := make(chan zkcoord.RecoveryEvent, 16)
	cfg := zkcoord.Config{Servers: exampleServers()}
	c, err := rebalance.StartConfig(ctx, cfg, "/example/recovery/invoices", rebalance.Handler{},
		rebalance.WithAutoRecovery(true),
		rebalance.WithRecoveryEvents(events))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := c.Stop(ctx); err != nil {
		fmt.Println(err)
	}
	var kinds []zkcoord.RecoveryKind
	for len(events) > 0 {
		kinds = append(kinds, (<-events).Kind) // and its Session, Err
	}
	fmt.Println(kinds)
	// Output:
	// [session started]
}
