package zkserver

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: Close
// must stop everything Launch started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// launch starts a cluster for one test. A machine without ZooKeeper fails
// the test: this package has nothing to test without one.
func launch(t *testing.T, opts ...Option) *Cluster {
	t.Helper()
	c, err := Launch(append([]Option{WithLogf(t.Logf)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A program runs a cluster without a test and gets rid of it with Close:
// no process and no file is left.
func TestLaunchAndClose(t *testing.T) {
	c := launch(t)
	dir := c.Dir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if m, err := c.Server(0).Srvr(ctx); err != nil || m["Mode"] != "standalone" {
		t.Fatalf("srvr = %v, %v", m, err)
	}
	if tail, err := c.Server(0).LogTail(5); err != nil || tail == "" {
		t.Fatalf("LogTail = %q, %v", tail, err)
	}
	c.Close()
	c.Close()
	if err := c.Server(0).Start(); err == nil {
		t.Fatal("a server of a closed cluster started again")
	}
	if c.Server(0).Running() {
		t.Fatal("server still running after Close")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cluster directory left behind: %v", err)
	}
}

// Without Java, Launch says so with ErrNoZooKeeper and starts nothing.
func TestLaunchWithoutZooKeeper(t *testing.T) {
	t.Setenv(EnvJava, "/nonexistent/java")
	c, err := Launch()
	if !errors.Is(err, ErrNoZooKeeper) || c != nil {
		t.Fatalf("Launch() = %v, %v; want ErrNoZooKeeper", c, err)
	}
	if !strings.Contains(err.Error(), "/nonexistent/java") {
		t.Fatalf("error does not name the java it tried: %v", err)
	}
}

// Bad options are errors, not panics or hangs.
func TestLaunchBadOptions(t *testing.T) {
	for _, opt := range []Option{WithServers(2), WithTickTime(0)} {
		if c, err := Launch(opt); err == nil {
			c.Close()
			t.Errorf("Launch accepted a bad option")
		}
	}
}

func TestLaunchRetriesOnPortConflict(t *testing.T) {
	// Not parallel: it replaces the port allocator.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	calls := 0
	allocPorts = func(n int) ([]int, error) {
		calls++
		ports, err := freePorts(n)
		if calls == 1 && err == nil {
			ports[0] = taken
		}
		return ports, err
	}
	defer func() { allocPorts = freePorts }()

	var notes []string
	c := launch(t, WithLogf(func(format string, args ...any) { notes = append(notes, format) }))
	if calls != 2 {
		t.Fatalf("%d start attempts, want 2", calls)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "port conflict") {
		t.Fatalf("progress notes %q, want one about the port conflict", notes)
	}
	if c.Servers()[0] == l.Addr().String() {
		t.Fatalf("server on the taken port %s", c.Servers()[0])
	}
	if _, err := c.Leader(); err != nil {
		t.Fatal(err)
	}
}
