package election_test

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

// shared is a standalone ZooKeeper used by tests that need no faults of
// their own, and by the examples.
var shared *zktest.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		// A re-executed test binary running one helper candidate.
		os.Exit(m.Run())
	}
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
		// Ticks of 500ms: ZooKeeper expires sessions in buckets of one tick;
		// TestLeaderKilled allows the session timeout plus two ticks.
		shared = zktest.Start(tb, zktest.WithTickTime(500*time.Millisecond))
		code = m.Run()
	}()
	if tb.skipped {
		fmt.Fprintln(os.Stderr, "election: ZooKeeper not available; skipping:", tb.msg)
		os.Exit(0)
	}
	if code == 0 {
		if err := checkGoroutines(ignore); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkGoroutines reports goroutines left behind by the tests, after
// giving them some seconds to end.
func checkGoroutines(ignore goleak.Option) error {
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		if err = goleak.Find(ignore, goleak.IgnoreTopFunction("os/signal.signal_recv")); err == nil {
			return nil
		}
	}
	return err
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
	dirs     []string
}

func (tb *mainTB) Helper() {}
func (tb *mainTB) Logf(f string, args ...any) {
	fmt.Fprintf(os.Stderr, f+"\n", args...)
}
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
	d, err := os.MkdirTemp("", "election-test-")
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
func connect(t testing.TB, servers []string, opts ...func(*zkcoord.Config)) *zkcoord.Session {
	t.Helper()
	cfg := zkcoord.Config{Servers: servers, SessionTimeout: 6 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := zkcoord.Connect(ctx, cfg)
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
