package node_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/node"
)

// Announce this instance while it runs: the node comes back if someone
// deletes it, and goes with the Session.
func ExampleKeep() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{
		Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
	})
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)

	k, err := node.Keep(ctx, sess, "/examples/instances/web-1", []byte("10.0.0.7:8080"))
	if err != nil {
		panic(err)
	}
	data, _, err := sess.Get(ctx, k.Path())
	fmt.Println(string(data), err)
	if err := k.Close(ctx); err != nil {
		panic(err)
	}
	// Output:
	// 10.0.0.7:8080 <nil>
}

// Announce this instance for as long as it runs, across sessions: after a
// session loss the node is created again, on a new session, with the data
// last set.
func ExampleKeepConfig() {
	ctx := context.Background()
	cfg := zkcoord.Config{Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ",")}
	events := make(chan zkcoord.RecoveryEvent, 16) // never closed by zkcoord
	k, err := node.KeepConfig(ctx, cfg, "/examples/instances/web-2", []byte("starting"),
		node.WithRecoveryEvents(events))
	if err != nil {
		panic(err)
	}
	go func() { // log each step of a recovery until the node's keeper ends
		for {
			select {
			case ev := <-events:
				log.Println(ev.Kind, ev.Err)
			case <-k.Done():
				return
			}
		}
	}()
	if err := k.Set(ctx, []byte("10.0.0.8:8080")); err != nil {
		panic(err)
	}
	fmt.Println(string(k.Data()))
	if err := k.Close(ctx); err != nil {
		panic(err)
	}
	// Output:
	// 10.0.0.8:8080
}
