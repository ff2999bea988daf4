package failover_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/zktest"
	"go.uber.org/goleak"
)

// shared is a standalone ZooKeeper for the tests and the examples.
var shared *zktest.Cluster

func TestMain(m *testing.M) {
	ignore := goleak.IgnoreCurrent()
	tb := &mainTB{}
	code := 1
	func() {
		defer tb.cleanup()
		defer func() {
			if r := recover(); r != nil && r != errMainStop {
				panic(r)
			}
		}()
		shared = zktest.Start(tb)
		code = m.Run()
	}()
	if tb.skipped {
		fmt.Fprintln(os.Stderr, "failover: ZooKeeper not available; skipping:", tb.msg)
		os.Exit(0)
	}
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

var errMainStop = fmt.Errorf("stop")

// mainTB lets TestMain start a cluster that outlives single tests.
type mainTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	failed   bool
	skipped  bool
	msg      string
}

func (tb *mainTB) Helper()                    {}
func (tb *mainTB) Logf(f string, args ...any) { fmt.Fprintf(os.Stderr, f+"\n", args...) }
func (tb *mainTB) Fatalf(f string, args ...any) {
	tb.failed = true
	fmt.Fprintf(os.Stderr, f+"\n", args...)
	panic(errMainStop)
}
func (tb *mainTB) Skipf(f string, args ...any) {
	tb.skipped, tb.msg = true, fmt.Sprintf(f, args...)
	panic(errMainStop)
}
func (tb *mainTB) Failed() bool { return tb.failed }
func (tb *mainTB) Cleanup(f func()) {
	tb.mu.Lock()
	tb.cleanups = append(tb.cleanups, f)
	tb.mu.Unlock()
}
func (tb *mainTB) TempDir() string {
	d, err := os.MkdirTemp("", "failover-test-")
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(d) })
	return d
}
func (tb *mainTB) cleanup() {
	for i := len(tb.cleanups) - 1; i >= 0; i-- {
		tb.cleanups[i]()
	}
}

// connect opens a Session for the test and closes it at the end.
func connect(t testing.TB, servers []string) *zkcoord.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: servers, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var pathSeq struct {
	sync.Mutex
	n int
}

func uniquePath(t testing.TB) string {
	pathSeq.Lock()
	pathSeq.n++
	n := pathSeq.n
	pathSeq.Unlock()
	return fmt.Sprintf("/failover-test/%d", n)
}
