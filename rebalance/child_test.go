package rebalance_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/rebalance"
)

// childRole is the launch role of a client process of the randomized test.
// launch.Self re-executes the test binary; TestMain recognises the role and
// runs childMain instead of the tests (and without starting ZooKeeper).
const childRole = "rebalance-client"

// childMain is one client process of the randomized test: it joins the
// group with auto-recovery and reports every acquire (after the barrier is
// created, before use) and release (after the last use, before the barrier
// is deleted) as oracle event lines on stdout. It reads commands from
// stdin: "sync <n>" answers "synced <n>" after every event emitted so far;
// "stop" leaves the group gracefully and exits.
func childMain(args []string) int {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	servers := fs.String("servers", "", "comma-separated ZooKeeper addresses")
	root := fs.String("root", "", "root path")
	group := fs.String("group", "g", "group")
	modeName := fs.String("mode", "incremental", "mode")
	name := fs.String("name", "client", "client name in the oracle")
	timeout := fs.Duration("timeout", 4*time.Second, "session timeout")
	lostAfter := fs.Float64("lost-after", 0.5, "self-expiry fraction")
	minInterval := fs.Duration("min-interval", 100*time.Millisecond, "minimum rebalancing interval")
	weight := fs.Int64("weight", 0, "the client's weight (0: none given)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	mode, err := rebalance.ParseMode(*modeName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	em := event.NewEmitter(os.Stdout, *name)
	h := rebalance.Handler{
		Assigned: func(ctx context.Context, a rebalance.Assignment) error {
			return em.Emit(event.Event{Kind: event.Acquire, Resource: a.Resource, Token: a.Token,
				Detail: fmt.Sprintf("%s gen %d", a.Client, a.Generation)})
		},
		Unassigned: func(a rebalance.Assignment, cause error) error {
			return em.Emit(event.Event{Kind: event.Release, Resource: a.Resource, Token: a.Token, Detail: cause.Error()})
		},
		Aborted: func(err error) {
			em.Emit(event.Event{Kind: event.Note, Detail: "aborted: " + err.Error()})
		},
	}
	cfg := zkcoord.Config{Servers: strings.Split(*servers, ","), SessionTimeout: *timeout, LostAfter: *lostAfter, Logger: log}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := rebalance.StartConfig(ctx, cfg, zkcoord.Join(*root, *group), h, rebalance.WithMode(mode),
		rebalance.WithMinInterval(*minInterval), rebalance.WithAutoRecovery(true), rebalance.WithName(*name),
		rebalance.WithMaxRecoveryBackoff(500*time.Millisecond), rebalance.WithWeight(*weight))
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		return 1
	}
	fmt.Println("ready", c.ID())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for {
		select {
		case line, ok := <-lines:
			if n, isSync := strings.CutPrefix(line, "sync "); ok && isSync {
				if err := em.WriteLine("synced " + n); err != nil {
					fmt.Fprintln(os.Stderr, "sync:", err)
					return 1
				}
				continue
			}
			if ok && line != "stop" {
				continue
			}
			stopCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err := c.Stop(stopCtx)
			cancel()
			if err != nil {
				fmt.Fprintln(os.Stderr, "stop:", err)
				return 1
			}
			fmt.Println("stopped")
			return 0
		case <-c.Done():
			fmt.Fprintln(os.Stderr, "client ended:", c.Err())
			return 1
		}
	}
}
