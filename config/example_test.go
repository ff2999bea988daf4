package config_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/config"
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

type FeatureFlags struct {
	NewCheckout bool `json:"new_checkout"`
	BatchSize   int  `json:"batch_size"`
}

func ExampleJSON() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	flags, err := config.NewJSON[FeatureFlags](sess, "/examples/flags")
	if err != nil {
		panic(err)
	}
	_ = flags.Node().Delete(ctx, config.AnyVersion) // start afresh

	// Services watch the flags...
	w := flags.Watch(ctx)
	defer w.Stop()
	fmt.Println("exists:", (<-w.Changes()).Exists)

	// ...while an operator edits them with compare-and-set.
	for _, edit := range []func(*FeatureFlags){
		func(f *FeatureFlags) { f.BatchSize = 100 },
		func(f *FeatureFlags) { f.NewCheckout = true },
	} {
		_, err := flags.Update(ctx, func(cur config.Value[FeatureFlags]) (FeatureFlags, error) {
			edit(&cur.Value)
			return cur.Value, nil
		})
		if err != nil {
			panic(err)
		}
	}

	// The watcher may skip versions, but always ends on the newest one.
	for v := range w.Changes() {
		if v.Version == 1 {
			fmt.Printf("version %d: %+v\n", v.Version, v.Value)
			break
		}
	}
	// Output:
	// exists: false
	// version 1: {NewCheckout:true BatchSize:100}
}

func ExampleNode_Set() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)

	n, _ := config.New(sess, "/examples/motd")
	_ = n.Delete(ctx, config.AnyVersion)
	v, err := n.Create(ctx, []byte("welcome"))
	if err != nil {
		panic(err)
	}
	// Two editors read version 0; only the first write wins.
	if _, err := n.Set(ctx, []byte("maintenance at 18:00"), v.Version); err != nil {
		panic(err)
	}
	_, err = n.Set(ctx, []byte("all good"), v.Version)
	fmt.Println(err)
	cur, _ := n.Get(ctx)
	fmt.Printf("%s (version %d)\n", cur.Data, cur.Version)
	// Output:
	// config: version conflict: /examples/motd is no longer at version 0
	// maintenance at 18:00 (version 1)
}

// Follow configuration for as long as the process runs: after a session
// loss the watch carries on on a new session with the newest version.
func ExampleWatchJSONConfig() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)
	flags, err := config.NewJSON[FeatureFlags](sess, "/examples/flags-across")
	if err != nil {
		panic(err)
	}
	if _, err := flags.Create(ctx, FeatureFlags{BatchSize: 10}); err != nil {
		panic(err)
	}

	cfg := zkcoord.Config{Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ",")}
	w, err := config.WatchJSONConfig[FeatureFlags](ctx, cfg, "/examples/flags-across")
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	fmt.Println((<-w.Changes()).Value.BatchSize)
	if _, err := flags.Update(ctx, func(cur config.Value[FeatureFlags]) (FeatureFlags, error) {
		cur.Value.BatchSize = 20
		return cur.Value, nil
	}); err != nil {
		panic(err)
	}
	fmt.Println((<-w.Changes()).Value.BatchSize)
	_ = sess.Delete(ctx, "/examples/flags-across", -1)
	// Output:
	// 10
	// 20
}
