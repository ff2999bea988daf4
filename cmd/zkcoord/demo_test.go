//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zkcoord/zkcoord/cmd/internal/browsertest"
	"github.com/zkcoord/zkcoord/cmd/internal/marked"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// The demo plays its whole script against a ZooKeeper server of its own and
// passes, and leaves nothing running: every process it starts (workers,
// their commands, the ZooKeeper JVM) inherits a mark from its environment,
// and once the demo has exited no process carries the mark.
func TestDemo(t *testing.T) {
	t.Parallel()
	mark := fmt.Sprintf("ZKCOORD_TEST_MARK=%d-%d", os.Getpid(), runs.Add(1))
	env := append(testEnv(cluster.ConnectString()), mark)
	t.Cleanup(func() { marked.Kill(mark) })
	d := start(t, env, "demo", "--plain")

	// While it runs: its ZooKeeper server and its workers carry the mark.
	var sawJava, sawWorker bool
	testkit.Eventually(t, 60*time.Second, "the demo's ZooKeeper server and workers", func() bool {
		for _, pid := range marked.Find(mark) {
			cmd := cmdline(pid)
			sawJava = sawJava || strings.Contains(cmd, "java") && strings.Contains(cmd, "zookeeper")
			sawWorker = sawWorker || strings.Contains(cmd, " rebalance ")
		}
		return sawJava && sawWorker || d.Exited()
	})
	if !sawJava || !sawWorker {
		t.Errorf("never saw the marked processes (ZooKeeper %v, a worker %v)", sawJava, sawWorker)
	}
	if code := d.exitCode(t, 2*time.Minute); code != 0 || !strings.Contains(strings.Join(d.stdout(), "\n"), "VERDICT: PASS") {
		t.Fatalf("demo: exit %d\n%s\nstderr:\n%s", code, strings.Join(d.stdout(), "\n"), d.Stderr())
	}
	out := strings.Join(d.stdout(), "\n")
	for _, want := range []string{"step 6 done", "rebalancing #", "no resource ever ran twice at once", "stopping ZooKeeper"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}

	// Killed processes may take a moment to be gone.
	deadline := time.Now().Add(5 * time.Second)
	for left := marked.Find(mark); len(left) > 0; left = marked.Find(mark) {
		if time.Now().After(deadline) {
			var desc []string
			for _, pid := range left {
				desc = append(desc, fmt.Sprintf("%d: %s", pid, cmdline(pid)))
			}
			t.Fatalf("left running after the demo exited:\n%s", strings.Join(desc, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cmdline returns a process's command line, its arguments separated by
// spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// With --zk, the demo uses the given servers, in a group of its own that it
// deletes at the end.
func TestDemoExternal(t *testing.T) {
	t.Parallel()
	r := zkc(t, "demo", "--zk", cluster.ConnectString(), "--workers", "2", "--resources", "5")
	if r.code != 0 || !strings.Contains(r.stdout, "VERDICT: PASS") {
		t.Fatalf("demo: %s", r)
	}
	sess := session(t)
	kids, _, err := sess.Children(t.Context(), "/zkcoord/rebalance")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if strings.HasPrefix(k, "demo-") {
			t.Errorf("the demo left its group %s behind", k)
		}
	}
}

// With --ui, the demo serves the web console of its ZooKeeper while it
// plays.
func TestDemoUI(t *testing.T) {
	t.Parallel()
	// Under a chroot of its own, so that TestDemoExternal does not see its
	// group.
	chroot := unique(t)
	mustZkc(t, "create", "--parents", chroot)
	d := start(t, nil, "demo", "--zk", cluster.ConnectString(), "--chroot", chroot, "--workers", "2",
		"--resources", "5", "--plain", "--pace", "1s", "--ui", "127.0.0.1:0")
	var url string
	testkit.Eventually(t, 60*time.Second, "the console's URL", func() bool {
		for _, l := range d.stdout() {
			if _, u, ok := strings.Cut(l, "the web console is at "); ok {
				url = strings.TrimSpace(u)
				return true
			}
		}
		return d.Exited()
	})
	if url == "" {
		t.Fatalf("no URL printed:\n%s", strings.Join(d.stdout(), "\n"))
	}
	if code, body := get(t, url); code != 200 || !strings.Contains(body, "<html") {
		t.Fatalf("GET %s: %d", url, code)
	}
	if code, body := get(t, url+"api/state"); code != 200 || !strings.Contains(body, "{") {
		t.Fatalf("GET %sapi/state: %d %s", url, code, body)
	}
	// The page shows the demo's group as it plays (the console started
	// before the group's root existed): its members by name, and the
	// resources moving between them on the timeline.
	b := browsertest.Start(t)
	browsertest.Run(t, b, time.Minute, chromedp.Navigate(url))
	card := `document.querySelector('[id^="card:/zkcoord/rebalance/demo-"]')`
	browsertest.Wait(t, b, 90*time.Second, card+`?.querySelectorAll("tr[data-member] .member-name").length >= 2 && `+
		`[...`+card+`.querySelectorAll("tr[data-member] .member-name")].every(n => /^worker-\d+$/.test(n.textContent))`, "recipes")
	browsertest.Wait(t, b, 90*time.Second,
		`[...document.querySelectorAll("#timeline li")].some(li => /rebalanced: generation \d+, \d+ moved: .*worker-\d+→worker-\d+/.test(li.textContent))`,
		"timeline")
	if code := d.exitCode(t, 3*time.Minute); code != 0 || !strings.Contains(strings.Join(d.stdout(), "\n"), "VERDICT: PASS") {
		t.Fatalf("demo: exit %d\n%s\nstderr:\n%s", code, strings.Join(d.stdout(), "\n"), d.Stderr())
	}
}

// Without zkcoord-demo beside it (or on the PATH), zkcoord demo says how to
// get it.
func TestDemoMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A link, not a copy: a copy written here may still be open in a
	// child that another test forks meanwhile, and exec then fails with
	// "text file busy". Both live in the temporary directory.
	alone := filepath.Join(dir, "zkcoord")
	if err := os.Link(binary, alone); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(alone, "demo", "--plain")
	cmd.Env = append(testEnv(cluster.ConnectString()), "PATH="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(string(out), "make demo") {
		t.Fatalf("zkcoord demo without zkcoord-demo: %v\n%s", err, out)
	}
}
