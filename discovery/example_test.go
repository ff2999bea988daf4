package discovery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/discovery"
)

func config() zkcoord.Config {
	return zkcoord.Config{
		Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
		Chroot:  "/examples-discovery",
	}
}

func connect(ctx context.Context) *zkcoord.Session {
	sess, err := zkcoord.Connect(ctx, config())
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
	// An instance that failed twice within 30 seconds is left out for a
	// while.
	failing, _ := p.Get()
	p.NoteError(failing)
	p.NoteError(failing)
	in, _ := p.Get()
	fmt.Println("after a failure:", in.ID)
	// Output:
	// orders-1 http://10.0.0.1:8080/v1
	// orders-2 http://10.0.0.2:8080/v1
	// orders-1 http://10.0.0.1:8080/v1
	// after a failure: orders-1
}

func ExampleDiscovery_NewCache() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)
	d, err := discovery.New(sess, "/cached")
	if err != nil {
		panic(err)
	}
	c, err := d.NewCache(ctx, "billing")
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)

	// Registered instances come and go; the cache reports each change.
	show := func() { ev := <-c.Events(); fmt.Println(ev, ev.Instance.Port) }
	show() // the initial load: no instance yet
	r, err := d.Register(ctx, discovery.Instance{Name: "billing", ID: "b1", Address: "10.0.0.9", Port: 80})
	if err != nil {
		panic(err)
	}
	show()
	in := r.Instance()
	in.Port = 8080
	if err := r.Update(ctx, in); err != nil {
		panic(err)
	}
	show()
	if err := r.Unregister(ctx); err != nil {
		panic(err)
	}
	show()
	// Output:
	// Initialized 0
	// Added billing/b1 80
	// Updated billing/b1 8080
	// Removed billing/b1 8080
}

func ExampleRegisterConfig() {
	ctx := context.Background()
	// The instance stays registered, on Sessions of its own, until
	// Unregister: after a Session is lost, a new one registers it again
	// with the latest data. Recovery events tell of each new Session.
	events := make(chan zkcoord.RecoveryEvent, 16)
	r, err := discovery.RegisterConfig(ctx, config(), "/kept",
		discovery.Instance{Name: "search", ID: "s1", Address: "10.0.0.7", Port: 80},
		discovery.WithRecoveryEvents(events))
	if err != nil {
		panic(err)
	}
	in := r.Instance()
	in.Port = 8080
	if err := r.Update(ctx, in); err != nil {
		panic(err)
	}
	fmt.Println(r.Path(), r.Instance().Port)
	if err := r.Unregister(ctx); err != nil {
		panic(err)
	}
	var kinds []zkcoord.RecoveryKind
	for len(events) > 0 { // all of them, once Unregister has returned
		kinds = append(kinds, (<-events).Kind)
	}
	fmt.Println(kinds)
	// Output:
	// /kept/search/s1 8080
	// [session started]
}
