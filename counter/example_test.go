package counter_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/counter"
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

func ExampleCounter() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	builds, err := counter.New(sess, "/examples/build-number", counter.WithSeed(100))
	if err != nil {
		panic(err)
	}
	if _, err := builds.SetCount(ctx, 100); err != nil {
		panic(err)
	}
	next, err := builds.Add(ctx, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println("build", next.Value)

	// A conditional write from a stale version fails and returns the
	// current count.
	stale := counter.Count{Value: 100, Version: next.Version - 1}
	cur, ok, err := builds.TrySetCount(ctx, stale, 500)
	if err != nil {
		panic(err)
	}
	fmt.Println("stale write applied:", ok, "- count is", cur.Value)
	// Output:
	// build 101
	// stale write applied: false - count is 101
}

func ExampleCounter_Watch() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	c, _ := counter.New(sess, "/examples/online-users")
	if _, err := c.SetCount(ctx, 3); err != nil {
		panic(err)
	}
	w := c.Watch(ctx)
	defer w.Stop()
	fmt.Println("now", (<-w.Changes()).Value)
	if _, err := c.Add(ctx, 2); err != nil {
		panic(err)
	}
	fmt.Println("now", (<-w.Changes()).Value)
	// Output:
	// now 3
	// now 5
}

// Follow a counter for as long as the process runs: after a session loss
// the watch carries on on a new session with the newest count.
func ExampleWatchConfig() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)
	jobs, err := counter.New(sess, "/examples/jobs-done")
	if err != nil {
		panic(err)
	}
	if _, err := jobs.SetCount(ctx, 41); err != nil {
		panic(err)
	}

	cfg := zkcoord.Config{Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ",")}
	w, err := counter.WatchConfig[int32](ctx, cfg, "/examples/jobs-done")
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	fmt.Println((<-w.Changes()).Value)
	if _, err := jobs.Add(ctx, 1); err != nil {
		panic(err)
	}
	fmt.Println((<-w.Changes()).Value)
	_ = sess.Delete(ctx, "/examples/jobs-done", -1)
	// Output:
	// 41
	// 42
}
