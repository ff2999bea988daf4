package zktest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/zktest"
)

// A program (a fault-injection run, a benchmark driver) can run a cluster
// and its proxies without a test.
func TestLaunchAndClose(t *testing.T) {
	c, err := zktest.Launch()
	if err != nil {
		t.Fatal(err)
	}
	dir := c.Dir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if m, err := c.Server(0).Srvr(ctx); err != nil || m["Mode"] != "standalone" {
		t.Fatalf("srvr = %v, %v", m, err)
	}
	p, err := c.OpenProxy()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Servers()) != 1 {
		t.Fatalf("proxy addresses %v", p.Servers())
	}
	c.Close()
	c.Close()
	if c.Server(0).Running() {
		t.Fatal("server still running after Close")
	}
	if err := p.Cut(); err == nil {
		t.Fatal("the proxy still works after its cluster closed")
	}
	if _, err := c.OpenProxy(); err == nil {
		t.Fatal("OpenProxy on a closed cluster succeeded")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cluster directory left behind: %v", err)
	}
}

// envStartChild makes TestStartWithoutZooKeeperUnderCI call Start itself.
const envStartChild = "ZKTEST_START_CHILD"

// Without ZooKeeper, Start skips the test.
func TestStartWithoutZooKeeper(t *testing.T) {
	t.Setenv(zktest.EnvJava, "/nonexistent/java")
	t.Setenv("CI", "")
	var sub *testing.T
	t.Run("start", func(t *testing.T) {
		sub = t
		zktest.Start(t)
		t.Error("Start returned without ZooKeeper")
	})
	if !sub.Skipped() {
		t.Fatal("Start did not skip the test")
	}
}

// Without ZooKeeper and with CI=true, Start fails the test. The failing test
// runs in a child test binary.
func TestStartWithoutZooKeeperUnderCI(t *testing.T) {
	if os.Getenv(envStartChild) != "" {
		zktest.Start(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartWithoutZooKeeperUnderCI$", "-test.v")
	cmd.Env = append(os.Environ(), envStartChild+"=1", "CI=true", zktest.EnvJava+"=/nonexistent/java")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child test passed:\n%s", out)
	}
	if !strings.Contains(string(out), "--- FAIL: TestStartWithoutZooKeeperUnderCI") ||
		!strings.Contains(string(out), "CI=true, so this is fatal") {
		t.Fatalf("the child test did not fail as expected (%v):\n%s", err, out)
	}
}
