package chaos

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/zkcoord/zkcoord/zktest"
)

// ErrNoZooKeeper is wrapped by StartCluster when ZooKeeper cannot run on this
// machine (zktest would skip the test).
var ErrNoZooKeeper = errors.New("chaos: ZooKeeper is not usable here")

// runTB lets zktest, which wants a testing.TB, run outside of a test: Fatalf
// and Skipf end the call made through try with an error instead of the
// goroutine, and cleanups run on close. Only the methods zktest uses are
// implemented; the embedded interface is nil.
type runTB struct {
	testing.TB
	log io.Writer

	mu       sync.Mutex
	cleanups []func()
	dirs     []string
	failed   bool
}

// tbStop is the panic value of Fatalf and Skipf.
type tbStop struct {
	err error
}

// try runs f, turning a Fatalf or Skipf in it into an error.
func (t *runTB) try(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(tbStop)
			if !ok {
				panic(r)
			}
			err = s.err
		}
	}()
	f()
	return nil
}

func (t *runTB) Helper() {}

func (t *runTB) Logf(format string, args ...any) {
	if t.log != nil {
		fmt.Fprintf(t.log, format+"\n", args...)
	}
}

func (t *runTB) Fatalf(format string, args ...any) {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	panic(tbStop{fmt.Errorf("chaos: "+format, args...)})
}

func (t *runTB) Skipf(format string, args ...any) {
	panic(tbStop{fmt.Errorf("%w: "+format, append([]any{ErrNoZooKeeper}, args...)...)})
}

func (t *runTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *runTB) Cleanup(f func()) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, f)
	t.mu.Unlock()
}

func (t *runTB) TempDir() string {
	d, err := os.MkdirTemp("", "zkcoord-chaos-")
	if err != nil {
		t.Fatalf("TempDir: %v", err)
	}
	t.mu.Lock()
	t.dirs = append(t.dirs, d)
	t.mu.Unlock()
	return d
}

func (t *runTB) Name() string { return "chaos" }

// close runs the cleanups, last first, and removes the temporary
// directories.
func (t *runTB) close() {
	t.mu.Lock()
	fs, dirs := t.cleanups, t.dirs
	t.cleanups, t.dirs = nil, nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}

// StartCluster starts a ZooKeeper ensemble of three servers (zktest.Start
// with opts added to WithServers(3)) outside of a test. stop kills it and
// removes its files. log, if not nil, receives zktest's log lines. The
// error wraps ErrNoZooKeeper when Java or the ZooKeeper jars are missing.
func StartCluster(log io.Writer, opts ...zktest.Option) (c *zktest.Cluster, stop func(), err error) {
	tb := &runTB{log: log}
	err = tb.try(func() {
		c = zktest.Start(tb, append([]zktest.Option{zktest.WithServers(3)}, opts...)...)
	})
	if err != nil {
		tb.close()
		return nil, nil, err
	}
	return c, tb.close, nil
}
