package queue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/queue"
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

func ExampleQueue() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	jobs, err := queue.New(sess, "/examples/jobs")
	if err != nil {
		panic(err)
	}
	for _, job := range []string{"resize", "encode", "upload"} {
		if _, err := jobs.Put(ctx, []byte(job)); err != nil {
			panic(err)
		}
	}
	n, _ := jobs.Len(ctx)
	fmt.Println(n, "jobs queued")
	for range n {
		job, err := jobs.Take(ctx) // blocks while the queue is empty
		if err != nil {
			panic(err)
		}
		fmt.Println("took", string(job))
	}
	// Output:
	// 3 jobs queued
	// took resize
	// took encode
	// took upload
}

func ExampleQueue_TakeN() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	events, err := queue.New(sess, "/examples/events")
	if err != nil {
		panic(err)
	}
	for i := range 5 {
		if _, err := events.Put(ctx, []byte(fmt.Sprint("event ", i))); err != nil {
			panic(err)
		}
	}
	// Take up to three items per transaction, in order.
	for {
		batch, err := events.TryTakeN(ctx, 3)
		if errors.Is(err, queue.ErrEmpty) {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q\n", batch)
	}
	// Output:
	// ["event 0" "event 1" "event 2"]
	// ["event 3" "event 4"]
}

func ExamplePriorityQueue() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	alerts, err := queue.NewPriority(sess, "/examples/alerts")
	if err != nil {
		panic(err)
	}
	_, _ = alerts.Put(ctx, 50, []byte("disk 80% full"))
	_, _ = alerts.Put(ctx, 0, []byte("datacenter on fire"))
	_, _ = alerts.Put(ctx, 50, []byte("disk 85% full"))
	for {
		a, err := alerts.TryTake(ctx)
		if errors.Is(err, queue.ErrEmpty) {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(string(a))
	}
	// Output:
	// datacenter on fire
	// disk 80% full
	// disk 85% full
}

func ExampleWorkQueue() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	work, err := queue.NewWork(sess, "/examples/work")
	if err != nil {
		panic(err)
	}
	if err := work.Put(ctx, []byte("resize image 7"), queue.DefaultWorkPriority); err != nil {
		panic(err)
	}
	// A consumer claims the item, processes it, then acknowledges it. Had
	// it crashed before Ack, another consumer would have got the item.
	claim, err := work.Take(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("processing:", string(claim.Data()))
	if err := claim.Ack(ctx); err != nil {
		panic(err)
	}
	n, _ := work.Len(ctx)
	fmt.Println("left:", n)
	// Output:
	// processing: resize image 7
	// left: 0
}

func ExampleCuratorQueue() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	// The queue a Java service builds with Curator's
	// QueueBuilder.builder(client, consumer, serializer, "/examples/orders")
	//	.lockPath("/examples/orders-lock").buildQueue()
	orders, err := queue.NewCurator(sess, "/examples/orders", queue.WithLockPath("/examples/orders-lock"))
	if err != nil {
		panic(err)
	}
	if err := orders.Put(ctx, []byte("order 1")); err != nil {
		panic(err)
	}
	// One node, two items: a consumer gets them together.
	if err := orders.PutMulti(ctx, [][]byte{[]byte("order 2"), []byte("order 3")}); err != nil {
		panic(err)
	}
	// Claim, process, acknowledge: processed at least once.
	claim, err := orders.Claim(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("processing %q\n", claim.Items())
	if err := claim.Ack(ctx); err != nil {
		panic(err)
	}
	// Take: removed at once, returned at most once.
	items, err := orders.Take(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("took %q\n", items)
	// Output:
	// processing ["order 1"]
	// took ["order 2" "order 3"]
}
