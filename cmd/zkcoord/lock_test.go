//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// Two lock processes never run their commands at once: each command
// appends "enter" and "exit" lines with its fencing token to one file; the
// lines must alternate, each exit matching the enter before it, and the
// tokens must grow.
func TestLockExclusive(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "log")
	path := unique(t)
	script := fmt.Sprintf(`echo "enter $ZKCOORD_TOKEN" >> %[1]s; sleep 0.2; echo "exit $ZKCOORD_TOKEN" >> %[1]s`, file)
	const perProcess = 4
	var wg sync.WaitGroup
	errs := make(chan string, 2*perProcess)
	for p := 0; p < 2; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perProcess; i++ {
				r := zkc(t, "lock", path, "--", "sh", "-c", script)
				if r.code != 0 {
					errs <- r.String()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("lock failed: %s", e)
	}
	lines := readLines(t, file)
	if len(lines) != 2*2*perProcess {
		t.Fatalf("want %d lines, got %d:\n%s", 4*perProcess, len(lines), strings.Join(lines, "\n"))
	}
	var last int64
	for i := 0; i < len(lines); i += 2 {
		enter, exit := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(enter) != 2 || len(exit) != 2 || enter[0] != "enter" || exit[0] != "exit" || enter[1] != exit[1] {
			t.Fatalf("commands overlapped at line %d:\n%s", i+1, strings.Join(lines, "\n"))
		}
		tok, err := strconv.ParseInt(enter[1], 10, 64)
		if err != nil || tok <= last {
			t.Fatalf("token %q after %d: want a larger number\n%s", enter[1], last, strings.Join(lines, "\n"))
		}
		last = tok
	}
}

// A lock lost to a network partition stops the command (SIGTERM) and
// makes zkcoord exit with status 3, before another process can take the
// lock.
func TestLockLost(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "log")
	path := unique(t)
	p := newProxyT(t)
	script := fmt.Sprintf(`trap 'echo term >> %[1]s; exit 0' TERM; echo "enter $ZKCOORD_TOKEN" >> %[1]s; while :; do sleep 0.05; done`, file)
	holder := start(t, testEnv(strings.Join(p.Servers(), ",")), "lock", path, "--", "sh", "-c", script)
	testkit.Eventually(t, 30*time.Second, "the command to start", func() bool { return len(readLines(t, file)) > 0 })

	// A second process waits for the lock meanwhile.
	next := start(t, nil, "lock", path, "--", "sh", "-c", fmt.Sprintf(`echo "next $ZKCOORD_TOKEN" >> %s`, file))
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if code := holder.exitCode(t, 30*time.Second); code != exitLost {
		t.Fatalf("want exit status 3 after losing the lock, got %d; stderr:\n%s", code, holder.Stderr())
	}
	if !strings.Contains(holder.Stderr(), "lost the lock") {
		t.Errorf("stderr does not say the lock was lost:\n%s", holder.Stderr())
	}
	if code := next.exitCode(t, 30*time.Second); code != 0 {
		t.Fatalf("the next holder failed: %d\n%s", code, next.Stderr())
	}
	lines := readLines(t, file)
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "enter") || lines[1] != "term" || !strings.HasPrefix(lines[2], "next") {
		t.Fatalf("want enter, term (before the next holder), next; got:\n%s", strings.Join(lines, "\n"))
	}
}

// Without a command, lock holds the lock until interrupted; --try fails at
// once while it is held.
func TestLockHoldAndTry(t *testing.T) {
	t.Parallel()
	path := unique(t)
	holder := start(t, nil, "lock", path)
	testkit.Eventually(t, 30*time.Second, "the lock to be held", func() bool {
		out := holder.stdout()
		return len(out) > 0 && strings.HasPrefix(out[0], "locked "+path+" token ")
	})
	r := zkc(t, "lock", path, "--try", "--", "true")
	if r.code != exitFailure || !strings.Contains(r.stderr, "held by another client") {
		t.Fatalf("--try on a held lock: %s", r)
	}
	r = zkc(t, "lock", path, "--wait", "300ms", "--", "true")
	if r.code != exitFailure || !strings.Contains(r.stderr, "not acquired within 300ms") {
		t.Fatalf("--wait on a held lock: %s", r)
	}
	if err := holder.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if code := holder.exitCode(t, time.Second); code != 0 {
		t.Fatalf("interrupted holder: exit %d\n%s", code, holder.Stderr())
	}
	// Released: the next lock succeeds at once, and passes its command's
	// exit status on.
	if r := zkc(t, "lock", path, "--try", "--", "sh", "-c", "exit 7"); r.code != 7 {
		t.Fatalf("want the command's status 7, got %s", r)
	}
	// A read lock and a semaphore lease.
	mustZkc(t, "lock", path+"-rw", "--read", "--", "true")
	mustZkc(t, "lock", path+"-sem", "--limit", "2", "--", "true")
}

// SIGTERM to lock stops the command and releases the lock; a killed lock
// process takes its command down with it.
func TestLockInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := unique(t)
	pidFile := filepath.Join(dir, "pid")
	holder := start(t, nil, "lock", path, "--", "sh", "-c", fmt.Sprintf("echo $$ > %s; exec sleep 600", pidFile))
	testkit.Eventually(t, 30*time.Second, "the command to start", func() bool { return len(readLines(t, pidFile)) > 0 })
	pid, _ := strconv.Atoi(readLines(t, pidFile)[0])
	if err := holder.Kill(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the command to die with zkcoord", func() bool { return !alive(pid) })

	holder = start(t, nil, "lock", path, "--", "sh", "-c", fmt.Sprintf("echo $$ > %s; exec sleep 600", pidFile+"2"))
	testkit.Eventually(t, 30*time.Second, "the second command to start", func() bool { return len(readLines(t, pidFile+"2")) > 0 })
	pid, _ = strconv.Atoi(readLines(t, pidFile+"2")[0])
	if err := holder.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if code := holder.exitCode(t, time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("want the command's status (killed by SIGTERM), got %d", code)
	}
	if alive(pid) {
		t.Errorf("the command still runs")
	}
}

// A command that ignores SIGTERM is killed with SIGKILL after the grace
// period, both when zkcoord is interrupted and when the lock is lost, and
// the lock goes to the next holder only once the command is gone: the next
// holder's command finds no process with the first command's pid.
func TestLockKillsStubbornCommand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		viaProxy bool // lose the lock to a network partition
		grace    time.Duration
		wantCode int
	}{
		// Interrupted: zkcoord passes on the command's status.
		{name: "interrupted", grace: time.Second, wantCode: 128 + int(syscall.SIGKILL)},
		// Lost: the grace is cut to fit in the session timeout.
		{name: "lost", viaProxy: true, grace: time.Minute, wantCode: exitLost},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := unique(t)
			pidFile, nextFile := filepath.Join(dir, "pid"), filepath.Join(dir, "next")
			env := testEnv(cluster.ConnectString())
			var proxy *zktest.Proxy
			if c.viaProxy {
				proxy = newProxyT(t)
				env = testEnv(strings.Join(proxy.Servers(), ","))
			}
			// The shell and the sleeps it starts all ignore SIGTERM.
			script := fmt.Sprintf(`trap '' TERM; echo $$ > %s; while :; do sleep 0.05; done`, pidFile)
			holder := start(t, env, "lock", path, "--grace", c.grace.String(), "--", "sh", "-c", script)
			testkit.Eventually(t, 30*time.Second, "the command to start", func() bool { return len(readLines(t, pidFile)) > 0 })
			pid, err := strconv.Atoi(readLines(t, pidFile)[0])
			if err != nil {
				t.Fatal(err)
			}

			next := start(t, nil, "lock", path, "--", "sh", "-c",
				fmt.Sprintf(`if kill -0 %d 2>/dev/null; then echo alive; else echo gone; fi > %s`, pid, nextFile))
			sess := session(t)
			testkit.Eventually(t, 30*time.Second, "the next holder to queue for the lock", func() bool {
				kids, _, err := sess.Children(t.Context(), path)
				return err == nil && len(kids) == 2
			})

			stopped := time.Now()
			if c.viaProxy {
				if err := proxy.Blackhole(); err != nil {
					t.Fatal(err)
				}
			} else if err := syscall.Kill(holder.Pid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := holder.exitCode(t, 45*time.Second); code != c.wantCode {
				t.Fatalf("want exit status %d, got %d; stderr:\n%s", c.wantCode, code, holder.Stderr())
			}
			if alive(pid) {
				t.Fatalf("the command (pid %d) survived zkcoord", pid)
			}
			if !c.viaProxy && time.Since(stopped) < c.grace {
				t.Errorf("the command was killed after %v, before the grace period of %v", time.Since(stopped), c.grace)
			}
			if c.viaProxy && !strings.Contains(holder.Stderr(), "killed by SIGKILL") {
				t.Errorf("stderr does not say the command was killed:\n%s", holder.Stderr())
			}
			if code := next.exitCode(t, 45*time.Second); code != 0 {
				t.Fatalf("the next holder failed: %d\n%s", code, next.Stderr())
			}
			if got := readLines(t, nextFile); len(got) != 1 || got[0] != "gone" {
				t.Fatalf("when the next holder's command started, the first command was %q, want gone", got)
			}
		})
	}
}

// A stop that begins during a partition does not run past the session's
// expiry, whatever --grace says: zkcoord is interrupted with a minute of
// grace while cut off from ZooKeeper, and the command, which ignores
// SIGTERM, must be dead before the next holder gets the lock.
func TestLockStopEndsBeforeExpiry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := unique(t)
	pidFile, nextFile := filepath.Join(dir, "pid"), filepath.Join(dir, "next")
	proxy := newProxyT(t)
	script := fmt.Sprintf(`trap '' TERM; echo $$ > %s; while :; do sleep 0.05; done`, pidFile)
	holder := start(t, testEnv(strings.Join(proxy.Servers(), ",")), "lock", path, "--grace", "1m", "--", "sh", "-c", script)
	testkit.Eventually(t, 30*time.Second, "the command to start", func() bool { return len(readLines(t, pidFile)) > 0 })
	pid, err := strconv.Atoi(readLines(t, pidFile)[0])
	if err != nil {
		t.Fatal(err)
	}
	next := start(t, nil, "lock", path, "--", "sh", "-c",
		fmt.Sprintf(`if kill -0 %d 2>/dev/null; then echo alive; else echo gone; fi > %s`, pid, nextFile))
	sess := session(t)
	testkit.Eventually(t, 30*time.Second, "the next holder to queue for the lock", func() bool {
		kids, _, err := sess.Children(t.Context(), path)
		return err == nil && len(kids) == 2
	})

	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(holder.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := next.exitCode(t, 45*time.Second); code != 0 {
		t.Fatalf("the next holder failed: %d\n%s", code, next.Stderr())
	}
	if got := readLines(t, nextFile); len(got) != 1 || got[0] != "gone" {
		t.Fatalf("when the next holder's command started, the first command was %q, want gone", got)
	}
	holder.exitCode(t, 30*time.Second)
}

// A command's grandchildren, started through a shell, die with a
// SIGKILLed zkcoord.
func TestLockGrandchildDiesWithZkcoord(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	holder := start(t, nil, "lock", unique(t), "--", "sh", "-c", fmt.Sprintf("sleep 600 & echo $! > %s; wait", pidFile))
	testkit.Eventually(t, 30*time.Second, "the command to start", func() bool { return len(readLines(t, pidFile)) > 0 })
	pid, err := strconv.Atoi(readLines(t, pidFile)[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if !alive(pid) {
		t.Fatalf("the grandchild %d does not run", pid)
	}
	if err := holder.Kill(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the grandchild to die with zkcoord", func() bool { return !alive(pid) })
}

// If the process between zkcoord and the command is killed on its own
// (by hand, or by the OOM killer), zkcoord still kills the command's group.
func TestLockGroupDiesWithItsShim(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	holder := start(t, nil, "lock", unique(t), "--", "sh", "-c", fmt.Sprintf("sleep 600 & echo $! > %s; wait", pidFile))
	testkit.Eventually(t, 30*time.Second, "the command to start", func() bool { return len(readLines(t, pidFile)) > 0 })
	pid, err := strconv.Atoi(readLines(t, pidFile)[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	sh := parentOf(t, pid)
	shim := parentOf(t, sh)
	if shim == holder.Pid() || parentOf(t, shim) != holder.Pid() {
		t.Fatalf("want zkcoord %d -> shim -> sh %d -> sleep %d, got shim %d", holder.Pid(), sh, pid, shim)
	}
	if err := syscall.Kill(shim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the grandchild to die with the shim", func() bool { return !alive(pid) })
	holder.exitCode(t, 30*time.Second)
}

// parentOf returns the parent process id of pid, from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return ppid
}

// The lock kinds the CLI takes, by their flags and as errors name them.
var cliLockKinds = map[string]struct {
	flags []string
	name  string
}{
	"mutex":     {nil, "mutex"},
	"read":      {[]string{"--read"}, "read/write lock"},
	"write":     {[]string{"--write"}, "read/write lock"},
	"semaphore": {[]string{"--limit", "2"}, "semaphore"},
}

// A lock of one kind refuses a path held by another kind (exit 1, naming
// both kinds and the flags) without running its command, and takes the
// path once the holder is gone.
func TestLockOtherKindRefused(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"mutex", "read"}, {"read", "mutex"}, {"mutex", "write"}, {"write", "mutex"},
		{"mutex", "semaphore"}, {"semaphore", "mutex"}, {"read", "semaphore"}, {"semaphore", "read"},
		{"write", "semaphore"}, {"semaphore", "write"},
	} {
		first, second := cliLockKinds[pair[0]], cliLockKinds[pair[1]]
		t.Run(pair[0]+"-then-"+pair[1], func(t *testing.T) {
			t.Parallel()
			path := unique(t)
			ran := filepath.Join(t.TempDir(), "ran")
			holder := start(t, nil, append([]string{"lock", path}, first.flags...)...)
			testkit.Eventually(t, 30*time.Second, "the lock to be held", func() bool {
				out := holder.stdout()
				return len(out) > 0 && strings.HasPrefix(out[0], "locked "+path+" token ")
			})
			second := append(append([]string{"lock", path}, second.flags...), "--", "sh", "-c", "echo ran > "+ran)
			r := zkc(t, second...)
			if r.code != exitFailure || !strings.Contains(r.stderr, first.name) || !strings.Contains(r.stderr, cliLockKinds[pair[1]].name) ||
				!strings.Contains(r.stderr, "--write") {
				t.Fatalf("%s beside a held %s: want exit 1 naming both kinds and the flags, got %s", pair[1], pair[0], r)
			}
			if readLines(t, ran) != nil {
				t.Fatalf("the command ran beside a held %s", pair[0])
			}
			if err := holder.Proc.Terminate(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if code := holder.exitCode(t, time.Second); code != 0 {
				t.Fatalf("interrupted holder: exit %d\n%s", code, holder.Stderr())
			}
			mustZkc(t, second...)
			if readLines(t, ran) == nil {
				t.Fatalf("the command did not run once the %s was released", pair[0])
			}
		})
	}
}

// --write takes the write side of the read/write lock that --read takes
// the read side of: a writer excludes readers and writers, readers share.
func TestLockWriteSide(t *testing.T) {
	t.Parallel()
	path := unique(t)
	if r := zkc(t, "lock", path, "--read", "--write", "--", "true"); r.code != exitUsage {
		t.Fatalf("--read with --write: want a usage error, got %s", r)
	}
	if r := zkc(t, "lock", path, "--write", "--limit", "2", "--", "true"); r.code != exitUsage {
		t.Fatalf("--write with --limit: want a usage error, got %s", r)
	}
	writer := start(t, nil, "lock", path, "--write")
	testkit.Eventually(t, 30*time.Second, "the write lock to be held", func() bool {
		out := writer.stdout()
		return len(out) > 0 && strings.HasPrefix(out[0], "locked "+path+" token ")
	})
	for _, flag := range []string{"--read", "--write"} {
		if r := zkc(t, "lock", path, flag, "--try", "--", "true"); r.code != exitFailure || !strings.Contains(r.stderr, "held by another client") {
			t.Fatalf("lock %s --try beside a writer: %s", flag, r)
		}
	}
	if err := writer.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	writer.exitCode(t, time.Second)

	reader := start(t, nil, "lock", path, "--read")
	testkit.Eventually(t, 30*time.Second, "the read lock to be held", func() bool {
		out := reader.stdout()
		return len(out) > 0 && strings.HasPrefix(out[0], "locked "+path+" token ")
	})
	mustZkc(t, "lock", path, "--read", "--try", "--", "true")
	if r := zkc(t, "lock", path, "--write", "--try", "--", "true"); r.code != exitFailure || !strings.Contains(r.stderr, "held by another client") {
		t.Fatalf("lock --write --try beside a reader: %s", r)
	}
	if err := reader.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	reader.exitCode(t, time.Second)
}

// A command that cannot run is reported before the lock is taken: no
// contender node is ever created.
func TestLockMissingCommandTakesNothing(t *testing.T) {
	t.Parallel()
	path := unique(t)
	r := zkc(t, "lock", path, "--", "/no/such/command")
	if r.code == 0 || !strings.Contains(r.stderr, "/no/such/command") || !strings.Contains(r.stderr, "not taken") {
		t.Fatalf("lock with a missing command: %s", r)
	}
	s := session(t)
	if kids, _, err := s.Children(context.Background(), path); err == nil && len(kids) > 0 {
		t.Fatalf("the lock directory holds %v", kids)
	}
	r = zkc(t, "elect", path+"-e", "--", "/no/such/command")
	if r.code == 0 || !strings.Contains(r.stderr, "/no/such/command") {
		t.Fatalf("elect with a missing command: %s", r)
	}
	if kids, _, err := s.Children(context.Background(), path+"-e"); err == nil && len(kids) > 0 {
		t.Fatalf("the election holds %v", kids)
	}
}
