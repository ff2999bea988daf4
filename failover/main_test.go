package failover_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/zktest"
)

// shared is a standalone ZooKeeper for the tests and the examples.
var shared *zktest.Cluster

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { shared = c }))
}

// connect opens a Session for the test and closes it at the end.
func connect(t testing.TB, servers []string) *zkcoord.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var pathSeq struct {
	sync.Mutex
	n int
}

func uniquePath(t testing.TB) string {
	pathSeq.Lock()
	pathSeq.n++
	n := pathSeq.n
	pathSeq.Unlock()
	return fmt.Sprintf("/failover-test/%d", n)
}
