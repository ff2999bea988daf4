//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// The exit codes, as the tests name them.
const (
	exitFailure = cli.ExitFailure
	exitUsage   = cli.ExitUsage
	exitLost    = cli.ExitLost
)

// The tests run the zkcoord binary, built once, as a subprocess against a
// real ZooKeeper server shared by the package.
var (
	cluster *zktest.Cluster
	binary  string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zkcoord-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "zkcoord")
	if err := buildBinary(binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := zktest.Main(m, func(c *zktest.Cluster) { cluster = c })
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildBinary builds the command, with the race detector if the tests run
// with it, and beside it zkcoord-demo, which "zkcoord demo" runs.
func buildBinary(out string) error {
	for _, b := range []struct{ out, pkg string }{{out, "."}, {filepath.Join(filepath.Dir(out), demoProgram), "../zkcoord-demo"}} {
		args := []string{"build", "-o", b.out}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", filepath.Base(b.out), err, stderr.String())
		}
	}
	return nil
}

// testEnv is the environment of the processes the tests start: no ZKCOORD_
// variable of the caller's, the shared server, quiet logs and a session
// timeout of 4s.
func testEnv(servers string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZKCOORD_") {
			env = append(env, kv)
		}
	}
	return append(env, "ZKCOORD_SERVERS="+servers, "ZKCOORD_SESSION_TIMEOUT=4s", "ZKCOORD_LOG_LEVEL=warn",
		"GORACE=atexit_sleep_ms=0")
}

// result is how a run of the binary ended.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// zkc runs the binary with args against the shared server and waits for it
// (at most a minute).
func zkc(t *testing.T, args ...string) result {
	t.Helper()
	return zkcEnv(t, testEnv(cluster.ConnectString()), args...)
}

func zkcEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running zkcoord %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("zkcoord %v did not finish within a minute:\n%s", args, r)
	}
	return r
}

// mustZkc runs the binary and fails the test unless it exits 0.
func mustZkc(t *testing.T, args ...string) string {
	t.Helper()
	r := zkc(t, args...)
	if r.code != 0 {
		t.Fatalf("zkcoord %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// bg is a zkcoord process running in the background.
type bg struct {
	*launch.Proc
	mu    sync.Mutex
	lines []string
}

// start starts the binary in the background; the test's cleanup kills it.
func start(t *testing.T, env []string, args ...string) *bg {
	t.Helper()
	if env == nil {
		env = testEnv(cluster.ConnectString())
	}
	b := &bg{}
	p, err := launch.Start(context.Background(), launch.Spec{Path: binary, Args: args, Env: env,
		Name: "zkcoord " + args[0]}, func(line string) {
		b.mu.Lock()
		b.lines = append(b.lines, line)
		b.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Proc = p
	t.Cleanup(func() { p.Kill() })
	return b
}

// stdout returns the lines written so far.
func (b *bg) stdout() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines...)
}

// exitCode waits for the process (at most timeout) and returns its exit
// status.
func (b *bg) exitCode(t *testing.T, timeout time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := b.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatalf("%s still running after %v; stderr:\n%s", b.Name(), timeout, b.Stderr())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s: %v", b.Name(), err)
	}
	return 0
}

// readLines returns the lines of a file written by the commands under test.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// session opens a Session on the shared server for checks made by the test.
func session(t *testing.T) *zkcoord.Session {
	t.Helper()
	return testkit.Open(t, zkcoord.Config{Servers: cluster.Servers(), SessionTimeout: 10 * time.Second})
}

// newProxyT returns a fault proxy in front of the shared server.
func newProxyT(t *testing.T) *zktest.Proxy {
	return cluster.NewProxy(t)
}

// unique returns a path that no other test, or other run of the same
// test (-count), uses.
func unique(t *testing.T) string {
	return fmt.Sprintf("/t/%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), runs.Add(1))
}

var runs atomic.Int64

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(st), ") Z ")
}
