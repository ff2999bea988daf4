package lock_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/zktest"
)

// cluster is one standalone ZooKeeper server shared by the package's tests
// and examples; every test works under its own directory.
var cluster *zktest.Cluster

// servers are the shared cluster's addresses, as the examples use them.
var servers []string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tb := &mainTB{}
	defer tb.cleanup()
	if !tb.do(func() { cluster = zktest.Start(tb) }) {
		return tb.code
	}
	servers = cluster.Servers()
	before := runtime.NumGoroutine()
	code := m.Run()
	// Fuzzing starts a signal-handling goroutine of its own.
	if f := flag.Lookup("test.fuzz"); code == 0 && (f == nil || f.Value.String() == "") {
		if err := checkGoroutines(before, 15*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	return code
}

// checkGoroutines waits for the goroutine count to drop back to before.
func checkGoroutines(before int, window time.Duration) error {
	deadline := time.Now().Add(window)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return nil
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Errorf("goroutine leak: %d goroutines before the tests, %d after:\n%s", before, n, buf)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mainTB lets TestMain start a zktest cluster, which wants a testing.TB.
// Only the methods zktest uses are implemented; Fatal and Skip unwind to
// do, which reports them.
type mainTB struct {
	testing.TB // nil: any other method panics

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	code     int
	dirs     []string
}

type tbStop struct{}

func (tb *mainTB) do(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, stop := r.(tbStop); !stop {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

func (tb *mainTB) Helper()      {}
func (tb *mainTB) Name() string { return "TestMain" }
func (tb *mainTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}
func (tb *mainTB) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
func (tb *mainTB) Log(args ...any) { fmt.Fprintln(os.Stderr, args...) }
func (tb *mainTB) Errorf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.mu.Lock()
	tb.failed, tb.code = true, 1
	tb.mu.Unlock()
}
func (tb *mainTB) Fatalf(format string, args ...any) {
	tb.Errorf(format, args...)
	panic(tbStop{})
}
func (tb *mainTB) Skipf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.code = 0
	panic(tbStop{})
}
func (tb *mainTB) Cleanup(f func()) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.cleanups = append(tb.cleanups, f)
}
func (tb *mainTB) TempDir() string {
	dir, err := os.MkdirTemp("", "zkcoord-lock-")
	if err != nil {
		tb.Fatalf("TempDir: %v", err)
	}
	tb.mu.Lock()
	tb.dirs = append(tb.dirs, dir)
	tb.mu.Unlock()
	return dir
}
func (tb *mainTB) cleanup() {
	tb.mu.Lock()
	cs, dirs := tb.cleanups, tb.dirs
	tb.cleanups, tb.dirs = nil, nil
	tb.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}

// testCtx returns a context that ends after d or when the test ends.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// sessionOption adjusts a test session's Config.
type sessionOption func(*zkcoord.Config)

func withTimeout(d time.Duration) sessionOption {
	return func(c *zkcoord.Config) { c.SessionTimeout = d }
}

func withServers(s []string) sessionOption {
	return func(c *zkcoord.Config) { c.Servers = s }
}

func withChroot(root string) sessionOption {
	return func(c *zkcoord.Config) { c.Chroot = root }
}

// connect opens a Session to the shared cluster, closed when the test ends.
func connect(t testing.TB, opts ...sessionOption) *zkcoord.Session {
	t.Helper()
	cfg := zkcoord.Config{Servers: cluster.Servers(), SessionTimeout: 6 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := zkcoord.Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		sess.Close(ctx)
	})
	return sess
}

var dirSeq atomic.Int64

// testDir returns a fresh lock directory for the test.
func testDir(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("/lock-tests/%s-%d", name, dirSeq.Add(1))
}

// waitFor polls cond until it returns nil or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %v: %v", what, d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// children lists dir, treating a missing directory as empty.
func children(t testing.TB, sess *zkcoord.Session, dir string) []string {
	t.Helper()
	c, _, err := sess.Children(testCtx(t, 30*time.Second), dir)
	if err != nil && !errorsIsNoNode(err) {
		t.Fatalf("children %s: %v", dir, err)
	}
	return c
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

func errorsIsNoNode(err error) bool { return errors.Is(err, zkcoord.ErrNoNode) }
