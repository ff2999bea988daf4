package chaos

import (
	"fmt"
	"io"

	"github.com/zkcoord/zkcoord/zktest"
)

// ErrNoZooKeeper is wrapped by StartCluster when ZooKeeper cannot run on this
// machine (zktest would skip the test). It is zktest.ErrNoZooKeeper.
var ErrNoZooKeeper = zktest.ErrNoZooKeeper

// StartCluster starts a ZooKeeper ensemble of three servers (zktest.Launch
// with opts added to WithServers(3)) outside of a test. stop kills it and
// removes its files. log, if not nil, receives zktest's progress notes. The
// error wraps ErrNoZooKeeper when Java or the ZooKeeper jars are missing.
func StartCluster(log io.Writer, opts ...zktest.Option) (c *zktest.Cluster, stop func(), err error) {
	logf := func(string, ...any) {}
	if log != nil {
		logf = func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	}
	all := append([]zktest.Option{zktest.WithServers(3), zktest.WithLogf(logf)}, opts...)
	c, err = zktest.Launch(all...)
	if err != nil {
		return nil, nil, fmt.Errorf("chaos: %w", err)
	}
	return c, c.Close, nil
}
