package zkcoord_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
)

func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{
		Servers:        strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
		SessionTimeout: 10 * time.Second,
		Chroot:         "/example",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close(ctx)

	// A protected ephemeral sequential node: found again after a lost
	// reply, never left behind if the caller gives up.
	node, err := sess.CreateProtected(ctx, "/workers", "worker-", []byte("me"), zkcoord.FlagEphemeralSequential)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(zkcoord.StripProtected(zkcoord.Base(node)))

	// Writes guarded by ownership of node.
	fence, err := sess.FenceOf(ctx, node)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sess.EnsurePath(ctx, "/config"); err != nil {
		fmt.Println(err)
		return
	}
	_, err = sess.GuardedSet(ctx, fence, "/config", []byte("written by the owner"), -1)
	fmt.Println("guarded write:", err)

	// Once the node is gone, the same write is refused.
	if err := sess.Delete(ctx, node, -1); err != nil {
		fmt.Println(err)
		return
	}
	_, err = sess.GuardedSet(ctx, fence, "/config", []byte("stale"), -1)
	fmt.Println("after losing it:", errors.Is(err, zkcoord.ErrNotOwner))
	// Output:
	// worker-0000000000
	// guarded write: <nil>
	// after losing it: true
}

// Watch a Session's state; Done closes when it is Lost, Expired or Closed.
func ExampleSession_Watch() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ",")})
	if err != nil {
		fmt.Println(err)
		return
	}
	states := sess.Watch(ctx)
	fmt.Println((<-states).State)
	sess.Close(ctx)
	for ch := range states {
		fmt.Println(ch.State, errors.Is(ch.Err, zkcoord.ErrSessionClosed))
	}
	<-sess.Done()
	// Output:
	// Connected
	// Closed true
}

// Keep a leadership going across Sessions: when a Session is Lost or
// Expired, Supervise opens a new one and campaigns again, a new leadership
// with a new token each time.
func ExampleSupervise() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := zkcoord.Config{Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ",")}
	// Once Supervise returned, every event it sent is in the channel.
	events := make(chan zkcoord.RecoveryEvent, 16)
	err := zkcoord.Supervise(ctx, cfg, func(ctx context.Context, sess *zkcoord.Session) error {
		// Campaign, lock or join here; this example only checks in.
		fmt.Println("working on a session:", sess.ID() != 0)
		return nil // done: Supervise returns nil
	}, zkcoord.WithRecoveryEvents(events))
	var kinds []zkcoord.RecoveryKind
	for len(events) > 0 {
		kinds = append(kinds, (<-events).Kind)
	}
	fmt.Println("done:", err, kinds)
	// Output:
	// working on a session: true
	// done: <nil> [session started]
}
