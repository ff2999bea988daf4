//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// With --health, a leader whose check fails --health-failures times in a
// row stops its command and resigns, stays out of the election while the
// check fails, and stands (and leads) again once it passes.
func TestElectHealth(t *testing.T) {
	t.Parallel()
	for _, fenced := range []bool{false, true} {
		dir := t.TempDir()
		file, ok := filepath.Join(dir, "log"), filepath.Join(dir, "healthy")
		if err := os.WriteFile(ok, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		path := unique(t)
		args := []string{"elect", path, "--id", "a", "--health", "test -f " + ok, "--health-interval", "200ms",
			"--health-failures", "2", "--grace", "5s"}
		if fenced {
			args = append(args, "--fence", "true")
		}
		a := start(t, nil, append(args, "--", "sh", "-c", leaderScript(file))...)
		testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(readLines(t, file)) == 1 })
		_, _, pid := parseLeaderLine(t, readLines(t, file)[0])

		if err := os.Remove(ok); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 30*time.Second, "the unhealthy leader's command to stop", func() bool { return !alive(pid) })
		electionPath := path
		if fenced {
			electionPath += "/lock"
		}
		testkit.Eventually(t, 30*time.Second, "a to leave the election", func() bool {
			var ps []participantJSON
			r := zkc(t, "election", "ls", electionPath, "--json")
			return r.code == 0 && json.Unmarshal([]byte(r.stdout), &ps) == nil && len(ps) == 0
		})
		if len(readLines(t, file)) != 1 {
			t.Fatalf("led again while unhealthy: %q", readLines(t, file))
		}

		if err := os.WriteFile(ok, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 30*time.Second, "a to lead again", func() bool { return len(readLines(t, file)) == 2 })
		if err := a.Proc.Terminate(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		if code := a.exitCode(t, 10*time.Second); code != 0 && code != 143 {
			t.Errorf("fenced %v: interrupted: exit %d\n%s", fenced, code, a.Stderr())
		}
	}
}
