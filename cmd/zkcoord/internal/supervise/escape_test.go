//go:build linux

package supervise

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/cmd/internal/marked"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// Every process a child starts is gone once the child counts as exited,
// also those that left its process group or session (setsid, a double
// fork, a process group of its own, SIGTERM ignored): when Stop returns,
// when the command exits by itself leaving them behind, and soon after the
// process that started the child is killed with SIGKILL.
func TestEscapedDescendantsDie(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// run starts the script, whose processes write their pids into
		// dir, and ends it in the way the case is about.
		run func(t *testing.T, dir, script string, started func() bool)
	}{
		{"stopped", func(t *testing.T, dir, script string, started func() bool) {
			c := start(t, script)
			testkit.Eventually(t, 30*time.Second, "the escaped processes to start", started)
			c.Stop(time.Second, nil, nil)
		}},
		{"stopped stubborn", func(t *testing.T, dir, script string, started func() bool) {
			c := start(t, "trap '' TERM; "+script)
			testkit.Eventually(t, 30*time.Second, "the escaped processes to start", started)
			c.Stop(time.Second, nil, nil)
		}},
		{"exited", func(t *testing.T, dir, script string, started func() bool) {
			// The script runs in the background; the command exits once
			// it has started its processes.
			var all []string
			for _, name := range marked.Escapees {
				all = append(all, "[ -s "+filepath.Join(dir, name)+" ]")
			}
			c := start(t, "("+script+") & until "+strings.Join(all, " && ")+"; do sleep 0.1; done; exit 5")
			if got := c.Status(); got != 5 {
				t.Errorf("status %d, want 5", got)
			}
			if !started() {
				t.Error("the command exited before its processes started")
			}
		}},
		{"parent killed", func(t *testing.T, dir, script string, started func() bool) {
			p, err := launch.Start(context.Background(), launch.Self("parent", parentRole, script), func(string) {})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Kill() })
			testkit.Eventually(t, 30*time.Second, "the escaped processes to start", started)
			if err := p.Kill(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mark := fmt.Sprintf("ZKCOORD_TEST_MARK=%d-%d", os.Getpid(), runs.Add(1))
			t.Cleanup(func() { marked.Kill(mark) })
			var pids []int
			started := func() bool {
				pids = pids[:0]
				for _, name := range marked.Escapees {
					b, err := os.ReadFile(filepath.Join(dir, name))
					pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
					if err != nil || perr != nil {
						return false
					}
					pids = append(pids, pid)
				}
				return true
			}
			c.run(t, dir, marked.EscapeScript(dir, mark, false), started)
			if c.name == "parent killed" {
				// The shim finds its parent gone, then kills and reaps.
				testkit.Eventually(t, 30*time.Second, "the processes to die with their parent", func() bool {
					return len(marked.Find(mark)) == 0
				})
			}
			if left := marked.Find(mark); len(left) > 0 {
				t.Errorf("%d processes outlived the child (escaped pids %v for %v)", len(left), pids, marked.Escapees)
			}
		})
	}
}

var runs atomic.Int64
