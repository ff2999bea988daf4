package zktest

import (
	"fmt"
	"os"
	"sync"
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
// tests left goroutines behind, stops the cluster and returns the exit code.
// Without ZooKeeper it fails the run when CI=true and skips it otherwise.
func Main(m *testing.M, setup func(*Cluster), opts ...Option) int {
	tb := &mainTB{}
	defer tb.cleanup()
	if !tb.run(func() {
		c := Start(tb, opts...)
		os.Setenv(EnvServers, c.ConnectString())
		if setup != nil {
			setup(c)
		}
	}) {
		return tb.code
	}
	ignore := goleak.IgnoreCurrent()
	code := m.Run()
	if code == 0 {
		if err := findLeaks(ignore); err != nil {
			fmt.Fprintln(os.Stderr, "zktest: goroutines left behind by the tests:", err)
			code = 1
		}
	}
	if code != 0 {
		tb.setFailed()
	}
	return code
}

// findLeaks gives goroutines that are winding down some seconds to end.
// Not counted: signal.Notify's goroutine (fuzzing starts one that never
// ends) and toxiproxy's link pipes, which may outlive a closed fault proxy
// briefly; they belong to the test tools, not to the code under test.
func findLeaks(ignore goleak.Option) error {
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		if err = goleak.Find(ignore,
			goleak.IgnoreTopFunction("os/signal.signal_recv"),
			goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).read"),
			goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).write"),
			goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"),
		); err == nil {
			return nil
		}
	}
	return err
}

// Launch starts a cluster outside of tests, for programs such as a demo or
// a benchmark driver. Close it when done: it kills every server process and
// removes its files. Server logs are kept in c.Dir() until then.
func Launch(opts ...Option) (*Cluster, error) {
	tb := &mainTB{quiet: true}
	var c *Cluster
	if !tb.run(func() { c = Start(tb, opts...) }) {
		tb.cleanup()
		return nil, fmt.Errorf("zktest: %s", tb.lastMsg())
	}
	c.closer = tb.cleanup
	return c, nil
}

// Close stops a cluster started with Launch. It is idempotent; clusters
// started with Start are stopped by their test's cleanup instead.
func (c *Cluster) Close() {
	c.closeOnce.Do(func() {
		if c.closer != nil {
			c.closer()
		}
	})
}

// mainTB is the testing.TB that Main hands to Start. Only the methods
// Start uses do anything.
type mainTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	failed   bool
	code     int
	quiet    bool   // keep messages instead of printing them
	msg      string // the last message
}

func (tb *mainTB) lastMsg() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.msg
}

// abort unwinds Start after Fatalf or Skipf.
type abort struct{}

// run runs f, reporting false if it called Fatalf or Skipf.
func (tb *mainTB) run(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isAbort := r.(abort); !isAbort {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

func (*mainTB) Helper() {}

func (*mainTB) Name() string { return "TestMain" }

func (tb *mainTB) Log(args ...any) { tb.Logf("%s", fmt.Sprint(args...)) }

func (tb *mainTB) Logf(format string, args ...any) {
	tb.mu.Lock()
	tb.msg = fmt.Sprintf(format, args...)
	quiet := tb.quiet
	tb.mu.Unlock()
	if !quiet {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}

func (tb *mainTB) Fatalf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.mu.Lock()
	tb.failed, tb.code = true, 1
	tb.mu.Unlock()
	panic(abort{})
}

func (tb *mainTB) Fatal(args ...any) { tb.Fatalf("%s", fmt.Sprint(args...)) }

func (tb *mainTB) Errorf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.setFailed()
}

func (tb *mainTB) Skipf(format string, args ...any) {
	tb.Logf(format, args...)
	panic(abort{})
}

func (tb *mainTB) setFailed() {
	tb.mu.Lock()
	tb.failed = true
	tb.mu.Unlock()
}

func (tb *mainTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}

func (tb *mainTB) TempDir() string {
	dir, err := os.MkdirTemp("", "zktest-")
	if err != nil {
		tb.Fatalf("zktest: temp dir: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (tb *mainTB) Cleanup(f func()) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.cleanups = append(tb.cleanups, f)
}

func (tb *mainTB) cleanup() {
	tb.mu.Lock()
	fs := tb.cleanups
	tb.cleanups = nil
	tb.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
