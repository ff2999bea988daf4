//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/cmd/internal/marked"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"golang.org/x/sys/unix"
)

// Every process a command starts dies with it, also those that left its
// process group or session (setsid, a double fork, a process group of its
// own, SIGTERM ignored), whether zkcoord is killed (SIGKILL) or stopped
// (SIGTERM), under lock, elect and rebalance --exec; and they are gone
// before the next holder gets the lock, the leadership or the resource:
// the next holder's command finds none of their pids, and none of the
// processes they started is left either.
func TestEscapedDescendantsDie(t *testing.T) {
	t.Parallel()
	cases := []struct {
		command  string
		stop     syscall.Signal
		stubborn bool // the command itself ignores SIGTERM: killed after --grace
	}{
		{command: "lock", stop: syscall.SIGKILL},
		{command: "lock", stop: syscall.SIGTERM},
		{command: "elect", stop: syscall.SIGKILL},
		{command: "elect", stop: syscall.SIGTERM, stubborn: true},
		{command: "rebalance", stop: syscall.SIGKILL},
		{command: "rebalance", stop: syscall.SIGTERM, stubborn: true},
	}
	for _, c := range cases {
		t.Run(c.command+"/"+unix.SignalName(c.stop), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := unique(t)
			group := strings.TrimPrefix(strings.ReplaceAll(path, "/", "-"), "-")
			checkFile := filepath.Join(dir, "check")
			run := func(id, script string) *bg {
				switch c.command {
				case "elect":
					return start(t, nil, "elect", path, "--id", id, "--grace", "1s", "--", "sh", "-c", script)
				case "rebalance":
					return start(t, nil, "rebalance", group, "--name", id, "--grace", "1s", "--exec", script)
				}
				return start(t, nil, "lock", path, "--grace", "1s", "--", "sh", "-c", script)
			}
			if c.command == "rebalance" {
				mustZkc(t, "resources", "add", group, "r1")
			}
			mark := fmt.Sprintf("ZKCOORD_TEST_MARK=%d-%d", os.Getpid(), runs.Add(1))
			t.Cleanup(func() { marked.Kill(mark) })
			first := run("a", marked.EscapeScript(dir, mark, c.stubborn))
			var pids []int
			testkit.Eventually(t, 30*time.Second, "the escaped processes to start", func() bool {
				pids = pids[:0]
				for _, name := range marked.Escapees {
					lines := readLines(t, filepath.Join(dir, name))
					if len(lines) == 0 {
						return false
					}
					pid, err := strconv.Atoi(lines[0])
					if err != nil {
						return false
					}
					pids = append(pids, pid)
				}
				return true
			})
			// The next holder's command says which of them still run.
			check := "for p in"
			for _, pid := range pids {
				check += " " + strconv.Itoa(pid)
			}
			check += fmt.Sprintf(`; do kill -0 $p 2>/dev/null && echo "alive $p"; done > %[1]s; echo checked >> %[1]s; `, checkFile)
			next := run("b", check+"while :; do sleep 0.1; done")
			sess := session(t)
			testkit.Eventually(t, 30*time.Second, "the next holder to wait", func() bool {
				if c.command == "rebalance" {
					return len(statusJSON(t, group).Members) == 2
				}
				kids, _, err := sess.Children(t.Context(), path)
				return err == nil && len(kids) == 2
			})

			if err := syscall.Kill(first.Pid(), c.stop); err != nil {
				t.Fatal(err)
			}
			first.exitCode(t, 30*time.Second)
			testkit.Eventually(t, 30*time.Second, "the next holder's command to run", func() bool {
				lines := readLines(t, checkFile)
				return len(lines) > 0 && lines[len(lines)-1] == "checked"
			})
			if got := readLines(t, checkFile); len(got) != 1 {
				t.Errorf("when the next holder's command started, escaped processes still ran: %v (pids %v for %v)",
					got[:len(got)-1], pids, marked.Escapees)
			}
			if left := marked.Find(mark); len(left) > 0 {
				t.Errorf("%d processes outlived zkcoord, among them %d (%s)", len(left), left[0], cmdline(left[0]))
			}
			if err := next.Terminate(30 * time.Second); err != nil {
				t.Error(err)
			}
		})
	}
}
