package cache_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cache"
)

func connect(ctx context.Context) *zkcoord.Session {
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{
		Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
		Chroot:  "/examples-cache",
	})
	if err != nil {
		panic(err)
	}
	return sess
}

// A tree cache follows a subtree: an initial snapshot, then each change.
func ExampleNewTree() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)
	_ = sess.EnsurePath(ctx, "/routes/eu")
	_, _ = sess.Create(ctx, "/routes/eu/db", []byte("10.0.0.7"), 0)

	c, err := cache.NewTree(sess, "/routes", cache.WithMaxDepth(2))
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	for ev := range c.Events() {
		fmt.Println(ev)
		if ev.Type == cache.Initialized {
			break
		}
	}

	_, _ = sess.Set(ctx, "/routes/eu/db", []byte("10.0.0.8"), -1)
	fmt.Println(<-c.Events())
	n, _ := c.Get("/routes/eu/db")
	fmt.Printf("db is at %s (version %d)\n", n.Data, n.Stat.Version)

	_ = sess.Delete(ctx, "/routes/eu/db", -1)
	fmt.Println(<-c.Events())
	fmt.Println(c.Children("/routes"), c.Children("/routes/eu"))
	_ = sess.Delete(ctx, "/routes/eu", -1)
	_ = sess.Delete(ctx, "/routes", -1)
	// Output:
	// Added /routes
	// Added /routes/eu
	// Added /routes/eu/db
	// Initialized
	// Updated /routes/eu/db
	// db is at 10.0.0.8 (version 1)
	// Removed /routes/eu/db
	// [eu] []
}

// A node cache follows one node, which need not exist yet.
func ExampleNewNode() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	c, err := cache.NewNode(sess, "/motd")
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	fmt.Println(<-c.Events())
	_, _ = sess.Create(ctx, "/motd", []byte("hello"), 0)
	fmt.Println(<-c.Events())
	n, ok := c.Get("/motd")
	fmt.Printf("%s %v\n", n.Data, ok)
	_ = sess.Delete(ctx, "/motd", -1)
	fmt.Println(<-c.Events())
	// Output:
	// Initialized
	// Added /motd
	// hello true
	// Removed /motd
}

// A tree cache that outlives sessions: after a session loss it carries on
// on a new one, reporting what changed meanwhile, then Resynced.
func ExampleNewTreeConfig() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)
	_ = sess.EnsurePath(ctx, "/flags/dark-mode")

	cfg := zkcoord.Config{
		Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
		Chroot:  "/examples-cache",
	}
	events := make(chan zkcoord.RecoveryEvent, 16) // never closed by zkcoord
	c, err := cache.NewTreeConfig(ctx, cfg, "/flags",
		cache.WithRecoveryEvents(events))
	if err != nil {
		panic(err)
	}
	go func() { // log each step of a recovery until the cache ends
		for {
			select {
			case ev := <-events:
				log.Println(ev.Kind, ev.Err)
			case <-c.Done():
				return
			}
		}
	}()
	defer c.Close(ctx)
	for ev := range c.Events() {
		fmt.Println(ev)
		if ev.Type == cache.Initialized {
			break
		}
	}
	_ = sess.Delete(ctx, "/flags/dark-mode", -1)
	fmt.Println(<-c.Events())
	_ = sess.Delete(ctx, "/flags", -1)
	// Output:
	// Added /flags
	// Added /flags/dark-mode
	// Initialized
	// Removed /flags/dark-mode
}
