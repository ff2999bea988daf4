package lock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// cluster is one standalone ZooKeeper server shared by the package's tests
// and examples; every test works under its own directory.
var cluster *zktest.Cluster

// servers are the shared cluster's addresses, as the examples use them.
var servers []string

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster, servers = c, c.Servers() }))
}

// testCtx returns a context that ends after d or when the test ends.
func testCtx(t testing.TB, d time.Duration) context.Context { return testkit.Ctx(t, d) }

// sessionOption adjusts a test session's Config.
type sessionOption func(*zkcoord.Config)

func withTimeout(d time.Duration) sessionOption {
	return func(c *zkcoord.Config) { c.SessionTimeout = d }
}

func withServers(s []string) sessionOption {
	return func(c *zkcoord.Config) { c.Servers = s }
}

func withChroot(root string) sessionOption {
	return func(c *zkcoord.Config) { c.Chroot = root }
}

// connect opens a Session to the shared cluster, closed when the test ends.
func connect(t testing.TB, opts ...sessionOption) *zkcoord.Session {
	t.Helper()
	cfg := zkcoord.Config{Servers: cluster.Servers(), SessionTimeout: 6 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	return testkit.Open(t, cfg)
}

var dirSeq atomic.Int64

// testDir returns a fresh lock directory for the test.
func testDir(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("/lock-tests/%s-%d", name, dirSeq.Add(1))
}

// children lists dir, treating a missing directory as empty.
func children(t testing.TB, sess *zkcoord.Session, dir string) []string {
	t.Helper()
	c, _, err := sess.Children(testCtx(t, 30*time.Second), dir)
	if err != nil && !errorsIsNoNode(err) {
		t.Fatalf("children %s: %v", dir, err)
	}
	return c
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func errorsIsNoNode(err error) bool { return errors.Is(err, zkcoord.ErrNoNode) }
