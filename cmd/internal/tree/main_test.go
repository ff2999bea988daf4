package tree

import (
	"os"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// servers are the addresses of the ZooKeeper server shared by this
// package's tests.
var servers []string

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { servers = c.Servers() }))
}

// connect opens a Session in a chroot private to the test.
func connect(t testing.TB) *zkcoord.Session {
	t.Helper()
	return testkit.Connect(t, servers)
}
