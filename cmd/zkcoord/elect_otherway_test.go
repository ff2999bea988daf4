//go:build unix

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// elect with --fence and elect without it on one path are two elections;
// the one that would take office second is refused, both ways, and says
// what to do, instead of a second leader running its command.
func TestElectRefusesTheOtherWay(t *testing.T) {
	t.Parallel()
	for _, fencedFirst := range []bool{false, true} {
		path := unique(t)
		fenced := []string{"elect", path, "--id", "f", "--fence", "true"}
		plain := []string{"elect", path, "--id", "p"}
		first, second := plain, fenced
		if fencedFirst {
			first, second = fenced, plain
		}
		leader := start(t, nil, first...)
		testkit.Eventually(t, 30*time.Second, "the first to lead", func() bool {
			out := leader.stdout()
			return len(out) > 0 && strings.HasPrefix(out[0], "leader ")
		})
		r := zkc(t, append(second, "--", "sh", "-c", "echo ran")...)
		wantFail(t, r, exitFailure, "another election leads on the same path")
		if strings.Contains(r.stdout, "ran") {
			t.Fatalf("fenced first %v: the second ran its command: %s", fencedFirst, r)
		}
		if !strings.Contains(r.stderr, "--fence") {
			t.Errorf("fenced first %v: the message does not say what to do: %s", fencedFirst, r)
		}
		if err := leader.Proc.Terminate(10 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
}
