package rebalance_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/launch"
	"github.com/zkcoord/zkcoord/zktest"
)

// cluster is the ZooKeeper server shared by the tests and examples of this
// package; each test works in its own root.
var cluster *zktest.Cluster

func TestMain(m *testing.M) {
	if launch.Role() == childRole {
		os.Exit(childMain(launch.Args()))
	}
	before, _ := countGoroutines()
	tb := &mainTB{}
	code := func() int {
		defer tb.cleanup()
		ok := tb.run(func() { cluster = zktest.Start(tb) })
		if !ok {
			if tb.skipped {
				fmt.Fprintln(os.Stderr, "rebalance tests skipped:", tb.msg)
				return 0
			}
			fmt.Fprintln(os.Stderr, "starting ZooKeeper:", tb.msg)
			return 1
		}
		return m.Run()
	}()
	if code == 0 {
		if err := checkGoroutines(before, 15*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkGoroutines waits for the goroutine count to drop back to before.
// Goroutines of the fault proxy's library are not counted: they are the
// harness's, and some outlive a closed proxy for a while.
func checkGoroutines(before int, window time.Duration) error {
	deadline := time.Now().Add(window)
	for {
		n, stacks := countGoroutines()
		if n <= before {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("goroutine leak: %d goroutines before the tests, %d after:\n%s", before, n, stacks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countGoroutines() (int, string) {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	var kept []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.TrimSpace(g) == "" || strings.Contains(g, "github.com/Shopify/toxiproxy") {
			continue
		}
		n++
		kept = append(kept, g)
	}
	return n, strings.Join(kept, "\n\n")
}

// mainTB lets TestMain start a zktest cluster (shared by tests and
// examples). Only the methods zktest uses are implemented; the embedded
// interface is nil.
type mainTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	failed   bool
	skipped  bool
	msg      string
	dirs     []string
}

// stopRun ends a run started by mainTB.run (Fatalf and Skipf).
type stopRun struct{}

func (t *mainTB) run(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(stopRun); !is {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

func (t *mainTB) Helper() {}
func (t *mainTB) Logf(format string, args ...any) {
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}
func (t *mainTB) Fatalf(format string, args ...any) {
	t.mu.Lock()
	t.failed, t.msg = true, fmt.Sprintf(format, args...)
	t.mu.Unlock()
	panic(stopRun{})
}
func (t *mainTB) Skipf(format string, args ...any) {
	t.mu.Lock()
	t.skipped, t.msg = true, fmt.Sprintf(format, args...)
	t.mu.Unlock()
	panic(stopRun{})
}
func (t *mainTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}
func (t *mainTB) Cleanup(f func()) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, f)
	t.mu.Unlock()
}
func (t *mainTB) TempDir() string {
	d, err := os.MkdirTemp("", "rebalance-test-")
	if err != nil {
		t.Fatalf("TempDir: %v", err)
	}
	t.mu.Lock()
	t.dirs = append(t.dirs, d)
	t.mu.Unlock()
	return d
}
func (t *mainTB) Name() string { return "TestMain" }

func (t *mainTB) cleanup() {
	t.mu.Lock()
	fs, dirs := t.cleanups, t.dirs
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	for _, d := range dirs {
		if strings.HasPrefix(d, os.TempDir()) {
			os.RemoveAll(d)
		}
	}
}
