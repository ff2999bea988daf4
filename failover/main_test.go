package failover_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
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
	return testkit.Open(t, zkcoord.Config{Servers: servers, SessionTimeout: 4 * time.Second})
}

// testCtx returns a context that ends after d or when the test ends.
func testCtx(t testing.TB, d time.Duration) context.Context { return testkit.Ctx(t, d) }

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
