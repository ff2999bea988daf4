package lease_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lease"
)

// Run the nightly clean-up on one host per day: whoever gets the lease runs
// it; the others see who did.
func ExampleTryAcquire() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{
		Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
	})
	if err != nil {
		panic(err)
	}
	defer sess.Close(ctx)

	for _, host := range []string{"host-a", "host-b"} {
		l, err := lease.TryAcquire(ctx, sess, "/examples/leases/nightly", 24*time.Hour, lease.WithID(host))
		if err != nil {
			panic(err)
		}
		if l.Obtained {
			fmt.Println(host, "runs the clean-up")
		} else {
			fmt.Println(host, "skips it:", l.Holder, "holds the lease")
		}
	}
	// Output:
	// host-a runs the clean-up
	// host-b skips it: host-a holds the lease
}
