package group_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/group"
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

func ExampleJoin() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	me, err := group.Join(ctx, sess, "/examples/workers", "worker-1", []byte("10.0.0.1:8080"))
	if err != nil {
		panic(err)
	}
	members, err := group.Members(ctx, sess, "/examples/workers")
	if err != nil {
		panic(err)
	}
	for _, m := range members {
		fmt.Printf("%s at %s\n", m.ID, m.Data)
	}

	// Done closes if the membership is lost (session lost or expired, or
	// the node deleted): stop doing the member's work then.
	go func() {
		<-me.Done()
	}()

	if err := me.Leave(ctx); err != nil {
		panic(err)
	}
	fmt.Println(me.Err())
	// Output:
	// worker-1 at 10.0.0.1:8080
	// group: member left
}

func ExampleWatch() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	w, err := group.Watch(ctx, sess, "/examples/cluster")
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	show := func() {
		var names []string
		for _, m := range <-w.Changes() {
			names = append(names, m.ID)
		}
		fmt.Println("members:", names)
	}
	show()

	node, _ := group.Join(ctx, sess, "/examples/cluster", "node-a", nil)
	show()
	_ = node.Leave(ctx)
	show()
	// Output:
	// members: []
	// members: [node-a]
	// members: []
}

// A scheduler starts a master somewhere and learns its address through a
// rendezvous node.
func ExampleNewRendezvous() {
	ctx := context.Background()
	scheduler := connect(ctx)
	defer scheduler.Close(ctx)

	r, err := group.NewRendezvous(ctx, scheduler, "/examples/job-7/master")
	if err != nil {
		panic(err)
	}
	defer r.Close(ctx)

	// The master is given r.Path() when it starts, and fills it in.
	go func(path string) {
		master := connect(ctx)
		defer master.Close(ctx)
		if err := group.Fill(ctx, master, path, []byte("10.0.0.9:7077")); err != nil {
			panic(err)
		}
	}(r.Path())

	addr, err := r.Wait(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("master listens on", string(addr))
	// Output:
	// master listens on 10.0.0.9:7077
}

// Stay a member for as long as the process runs: after a session loss the
// member joins again, with the same id and data, on a new session.
func ExampleJoinConfig() {
	ctx := context.Background()
	cfg := zkcoord.Config{Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ",")}
	me, err := group.JoinConfig(ctx, cfg, "/examples/replicas", "replica-1", []byte("10.0.0.2:8080"))
	if err != nil {
		panic(err)
	}
	fmt.Println(me.ID(), me.Err())
	if err := me.Leave(ctx); err != nil {
		panic(err)
	}
	fmt.Println(me.Err())
	// Output:
	// replica-1 <nil>
	// group: member left
}
