package election_test

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

// shared is a standalone ZooKeeper used by tests that need no faults of
// their own, and by the examples.
var shared *zktest.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		// A re-executed test binary running one helper candidate.
		os.Exit(m.Run())
	}
	// Ticks of 500ms: ZooKeeper expires sessions in buckets of one tick;
	// TestLeaderKilled allows the session timeout plus two ticks.
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { shared = c }, zktest.WithTickTime(500*time.Millisecond)))
}

// connect opens a Session for the test and closes it at the end.
func connect(t testing.TB, servers []string, opts ...func(*zkcoord.Config)) *zkcoord.Session {
	t.Helper()
	cfg := zkcoord.Config{Servers: servers, SessionTimeout: 6 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	return testkit.Open(t, cfg)
}

// testCtx returns a context that ends after d or when the test ends.
func testCtx(t testing.TB, d time.Duration) context.Context { return testkit.Ctx(t, d) }

// recv waits for a value on ch.
func recv[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", what)
		}
		return v
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
	panic("unreachable")
}

// waitClosed waits until ch is closed.
func waitClosed(t testing.TB, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
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

var pathSeq struct {
	sync.Mutex
	n int
}

// uniquePath returns a fresh election path for a test.
func uniquePath(t testing.TB) string {
	pathSeq.Lock()
	pathSeq.n++
	n := pathSeq.n
	pathSeq.Unlock()
	return fmt.Sprintf("/test/%s-%d/leader", sanitize(t.Name()), n)
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '/' || c == ' ' {
			b[i] = '_'
		}
	}
	return string(b)
}
