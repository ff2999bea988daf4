package zktest

import (
	"errors"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// EnvServers is set by Main to the shared cluster's connect string, so that
// examples can read it the way a program reads its configuration.
const EnvServers = "ZOOKEEPER_SERVERS"

// Main runs a test binary's tests and examples against one shared cluster.
// Call it from TestMain:
//
//	var cluster *zktest.Cluster
//
//	func TestMain(m *testing.M) {
//		os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster = c }))
//	}
//
// setup runs once the cluster serves, before any test. Main sets
// ZOOKEEPER_SERVERS to the cluster's connect string, fails the run if the
// tests left goroutines behind, stops the cluster and returns the exit code;
// when the run failed, it first prints the tail of each server's log.
// Without ZooKeeper it fails the run when CI=true and skips it otherwise.
func Main(m *testing.M, setup func(*Cluster), opts ...Option) int {
	c, err := Launch(append([]Option{WithLogf(stderrf)}, opts...)...)
	if err != nil {
		if errors.Is(err, ErrNoZooKeeper) && !ciStrict() {
			stderrf("zktest: skipping the tests: %v", err)
			return 0
		}
		stderrf("zktest: %v", err)
		return 1
	}
	defer c.Close()
	os.Setenv(EnvServers, c.ConnectString())
	if setup != nil {
		setup(c)
	}
	ignore := goleak.IgnoreCurrent()
	code := m.Run()
	if code == 0 {
		if err := findLeaks(ignore); err != nil {
			stderrf("zktest: goroutines left behind by the tests: %v", err)
			code = 1
		}
	}
	if code != 0 {
		c.logTails(stderrf, "tests failed")
	}
	return code
}

// findLeaks gives goroutines that are winding down some seconds to end.
// Not counted: signal.Notify's goroutine (fuzzing starts one that never
// ends). A fault proxy's goroutines are counted: Proxy.Close waits for them.
func findLeaks(ignore goleak.Option) error {
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		if err = goleak.Find(ignore,
			goleak.IgnoreTopFunction("os/signal.signal_recv"),
		); err == nil {
			return nil
		}
	}
	return err
}
