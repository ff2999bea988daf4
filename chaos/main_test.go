package chaos_test

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/chaos"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/zktest"
	"go.uber.org/goleak"
)

// TestMain runs the child processes of the runs (this test binary, started
// again by launch.Self with a role) and checks for goroutine leaks.
func TestMain(m *testing.M) {
	if role := launch.Role(); role != "" {
		os.Exit(chaos.ChildMain(role, launch.Args()))
	}
	ignore := goleak.IgnoreCurrent()
	code := m.Run()
	ensemble.mu.Lock()
	if ensemble.stop != nil {
		ensemble.stop()
	}
	ensemble.mu.Unlock()
	if code == 0 {
		var err error
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
			if err = goleak.Find(ignore, goleak.IgnoreTopFunction("os/signal.signal_recv")); err == nil {
				break
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestHelperProcess is what launch.Self runs; TestMain intercepts the
// children before it, so it only ever skips.
func TestHelperProcess(t *testing.T) {
	t.Skip("helper process only")
}

// ensemble is the 3-server ZooKeeper shared by the runs of this package,
// started by the first test that needs it.
var ensemble struct {
	mu   sync.Mutex
	c    *zktest.Cluster
	stop func()
	err  error
}

func cluster(t *testing.T) *zktest.Cluster {
	t.Helper()
	ensemble.mu.Lock()
	defer ensemble.mu.Unlock()
	if ensemble.c == nil && ensemble.err == nil {
		ensemble.c, ensemble.stop, ensemble.err = chaos.StartCluster(nil)
	}
	switch err := ensemble.err; {
	case errors.Is(err, chaos.ErrNoZooKeeper) && os.Getenv("CI") != "true":
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	return ensemble.c
}

func spawn(name, role string, args []string) launch.Spec {
	return launch.Self(name, role, args...)
}
