package group

import (
	"os"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// cluster is the ZooKeeper server shared by the tests and examples of this
// package; servers is its address list.
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

var (
	chrootOf = testkit.Chroot
	testCtx  = testkit.Ctx
	waitFor  = testkit.WaitFor
)
