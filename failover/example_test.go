package failover_test

import (
	"context"
	"fmt"
	"log"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/failover"
)

func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: shared.Servers()})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(context.Background())

	// fence must make sure the previous active can no longer act: kill
	// it, cut it off from the resource, or raise the resource's minimum
	// token above prev.Token.
	fence := func(ctx context.Context, prev failover.Breadcrumb) error {
		fmt.Printf("fencing %s at %s\n", prev.ID, prev.Data)
		return nil
	}
	f, err := failover.New(sess, "/examples/billing", fence,
		failover.WithID("billing-1"), failover.WithData([]byte("10.0.0.7:8080")))
	if err != nil {
		log.Fatal(err)
	}
	err = f.Run(ctx, func(ctx context.Context, a failover.Activation) error {
		fmt.Println("active; previous active needed fencing:", a.Previous != nil)
		// Work until ctx ends (the lock was lost or Run's ctx ended),
		// passing a.Token to the resource with every write. Here the
		// example stops at once, cleanly.
		cancel()
		<-ctx.Done()
		return nil
	})
	fmt.Println("stopped:", err)
	crumb, _ := f.Breadcrumb(context.Background())
	fmt.Println("breadcrumb left:", crumb != nil)
	// Output:
	// active; previous active needed fencing: false
	// stopped: <nil>
	// breadcrumb left: false
}
