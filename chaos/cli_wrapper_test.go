//go:build linux

package chaos

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// TestCLIWrapperOutlivesTerm checks the promise each wrapper of the cli
// workload makes: it runs until its worker has exited, also through
// SIGTERM. A wrapper that ended before its worker would have zkcoord kill
// the worker with it, and a run with BugGrace would then show no double
// access where the broken stop lets one happen. SIGTERM goes to the
// wrapper's process group, as zkcoord's stop sends it, over and over, so
// that it lands in every step of the wrapper's loop; the worker ignores
// it, as a worker with -ignore-term does, and ends only when killed.
func TestCLIWrapperOutlivesTerm(t *testing.T) {
	for name, daemon := range map[string]cliDaemon{"plain": cliPlain, "setsid": cliSetsid, "double-fork": cliDoubleFork} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "worker.pid")
			worker := "sh -c " + shellQuote("trap '' TERM; echo $$ > "+shellQuote(pidFile)+".new && mv "+
				shellQuote(pidFile)+".new "+shellQuote(pidFile)+"; exec sleep 600")
			cmd := exec.Command("/bin/sh", "-c", cliWrapper(worker, daemon, false))
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			var pid int
			testkit.WaitFor(t, 10*time.Second, "the worker's pid", func() error {
				b, err := os.ReadFile(pidFile)
				if err != nil {
					return err
				}
				pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
				return err
			})
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			// Whether the worker still ran when the wrapper ended.
			workerAtEnd := make(chan bool, 1)
			go func() {
				_ = cmd.Wait()
				workerAtEnd <- running(pid)
			}()
			for range 300 {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				time.Sleep(time.Millisecond) // spread over the wrapper's loop
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("killing the worker: %v", err)
			}
			select {
			case alive := <-workerAtEnd:
				if alive {
					t.Fatal("the wrapper ended while its worker still ran")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the wrapper still runs 30s after its worker was killed")
			}
		})
	}
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return true
	}
	// The command name, in parentheses, may hold ") " itself.
	stat := string(b)
	return !strings.HasPrefix(stat[strings.LastIndex(stat, ")")+1:], " Z")
}
