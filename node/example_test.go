package node_test

import (
	"context"
	"fmt"
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
