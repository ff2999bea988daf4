package discovery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/discovery"
)

func connect(ctx context.Context) *zkcoord.Session {
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{
		Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
		Chroot:  "/examples-discovery",
	})
	if err != nil {
		panic(err)
	}
	return sess
}

func Example() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)
	d, err := discovery.New(sess, "/services")
	if err != nil {
		panic(err)
	}

	// Two instances of a service register themselves...
	for i, addr := range []string{"10.0.0.1", "10.0.0.2"} {
		_, err := d.Register(ctx, discovery.Instance{
			Name: "orders", ID: fmt.Sprintf("orders-%d", i+1), Address: addr, Port: 8080,
			Payload: json.RawMessage(`{"zone":"eu-1"}`),
			URISpec: "{scheme}://{address}:{port}/v1",
		})
		if err != nil {
			panic(err)
		}
	}

	// ...and a client finds them, taking them in turn.
	p, err := d.NewProvider(ctx, "orders")
	if err != nil {
		panic(err)
	}
	defer p.Close(ctx)
	for i := 0; i < 3; i++ {
		in, _ := p.Get()
		fmt.Println(in.ID, in.URI(nil))
	}
	// A failing instance is left out for a while.
	p.MarkDown("orders-1", time.Minute)
	in, _ := p.Get()
	fmt.Println("after a failure:", in.ID)
	// Output:
	// orders-1 http://10.0.0.1:8080/v1
	// orders-2 http://10.0.0.2:8080/v1
	// orders-1 http://10.0.0.1:8080/v1
	// after a failure: orders-2
}
