package rebalance_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/launch"
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
	code := func() int {
		c, err := zktest.Launch(zktest.WithLogf(verboseLogf))
		if errors.Is(err, zktest.ErrNoZooKeeper) && os.Getenv("CI") != "true" {
			fmt.Fprintln(os.Stderr, "rebalance tests skipped:", err)
			return 0
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting ZooKeeper:", err)
			return 1
		}
		defer c.Close()
		cluster = c
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

// verboseLogf prints zktest's progress notes with -v.
func verboseLogf(format string, args ...any) {
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}

// checkGoroutines waits for the goroutine count to drop back to before.
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
		if strings.TrimSpace(g) == "" {
			continue
		}
		n++
		kept = append(kept, g)
	}
	return n, strings.Join(kept, "\n\n")
}
