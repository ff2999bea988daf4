package queue

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/zktest"
)

// cluster is the ZooKeeper server shared by the tests and examples of this
// package; servers is its address list.
var (
	cluster *zktest.Cluster
	servers []string
)

func TestMain(m *testing.M) {
	tb := &mainTB{}
	code := func() (code int) {
		defer tb.cleanup()
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(mainAbort); !ok {
					panic(r)
				}
				code = tb.code
			}
		}()
		cluster = zktest.Start(tb)
		servers = cluster.Servers()
		// Examples read the servers from the environment, as a program would.
		os.Setenv("ZOOKEEPER_SERVERS", cluster.ConnectString())
		before := runtime.NumGoroutine()
		code = m.Run()
		if code == 0 {
			if err := checkGoroutines(before, 15*time.Second); err != nil {
				fmt.Fprintln(os.Stderr, err)
				code = 1
			}
		}
		return code
	}()
	os.Exit(code)
}

// checkGoroutines waits for the goroutine count to drop back to before.
func checkGoroutines(before int, window time.Duration) error {
	deadline := time.Now().Add(window)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Errorf("goroutine leak: %d goroutines before the tests, %d after:\n%s",
				before, runtime.NumGoroutine(), buf)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// mainTB lets TestMain start a zktest cluster shared by tests and examples.
// Only the methods zktest uses are implemented.
type mainTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	failed   bool
	code     int
}

type mainAbort struct{}

func (*mainTB) Helper() {}

func (tb *mainTB) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (tb *mainTB) Fatalf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.mu.Lock()
	tb.failed, tb.code = true, 1
	tb.mu.Unlock()
	panic(mainAbort{})
}

func (tb *mainTB) Skipf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.code = 0
	panic(mainAbort{})
}

func (tb *mainTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}

func (tb *mainTB) TempDir() string {
	dir, err := os.MkdirTemp("", "zktest-main-")
	if err != nil {
		tb.Fatalf("TempDir: %v", err)
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

// sessionTimeout is long enough for a loaded machine: a Session declares
// itself lost after 2/3 of it without a server response, and pings only
// every third of it, so a server stalled for a third of it (a busy 2-core
// machine running JVMs) would end a shorter session. Tests about loss
// expire or close sessions explicitly.
const sessionTimeout = 20 * time.Second

// connect opens a Session chrooted to a directory private to the test and
// closes it when the test ends.
func connect(t testing.TB, mod ...func(*zkcoord.Config)) *zkcoord.Session {
	t.Helper()
	cfg := zkcoord.Config{
		Servers:        servers,
		SessionTimeout: sessionTimeout,
		Chroot:         chrootOf(t),
	}
	for _, f := range mod {
		f(&cfg)
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

var (
	chrootMu sync.Mutex
	chroots  = map[testing.TB]string{}
	runs     int
)

// chrootOf returns a directory private to one run of a test, so that
// -count=N runs do not see each other's nodes.
func chrootOf(t testing.TB) string {
	chrootMu.Lock()
	defer chrootMu.Unlock()
	if c, ok := chroots[t]; ok {
		return c
	}
	runs++
	c := fmt.Sprintf("/%s-%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), runs)
	chroots[t] = c
	t.Cleanup(func() {
		chrootMu.Lock()
		delete(chroots, t)
		chrootMu.Unlock()
	})
	return c
}

// testCtx returns a context that ends after d or when the test ends.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
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

type notYet struct{}

func (notYet) Error() string { return "not yet" }

var errNotYet error = notYet{}
