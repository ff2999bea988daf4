package queue

import (
	"os"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// cluster is the ZooKeeper server shared by this package's tests and
// examples; servers are its addresses.
var (
	cluster *zktest.Cluster
	servers []string
)

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster, servers = c, c.Servers() }))
}

// connect opens a Session in a chroot private to the test.
func connect(t testing.TB, mod ...func(*zkcoord.Config)) *zkcoord.Session {
	t.Helper()
	return testkit.Connect(t, servers, mod...)
}
