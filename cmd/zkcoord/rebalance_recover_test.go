//go:build unix

package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A rebalance worker whose session is lost stops its resource's CMD, joins
// the group again with a new session and runs CMD again, with a new token;
// with --no-recover it exits with status 3 instead.
func TestRebalanceRejoinsAfterSessionLoss(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exec := fmt.Sprintf(`echo "$ZKCOORD_TOKEN" >> %s/{resource}; exec sleep 600`, dir)
	worker := func(name string, extra ...string) (*bg, func() error) {
		group := strings.TrimPrefix(strings.ReplaceAll(unique(t), "/", "-"), "-") + "-" + name
		mustZkc(t, "resources", "add", group, name)
		p := newProxyT(t)
		w := start(t, testEnv(strings.Join(p.Servers(), ",")),
			append([]string{"rebalance", group, "--exec", exec, "--grace", "1s"}, extra...)...)
		testkit.Eventually(t, 30*time.Second, name+" to run", func() bool {
			return len(readLines(t, filepath.Join(dir, name))) == 1
		})
		if err := p.Blackhole(); err != nil {
			t.Fatal(err)
		}
		return w, p.Heal
	}
	w, heal := worker("again")
	wn, _ := worker("once", "--no-recover")

	if code := wn.exitCode(t, 30*time.Second); code != exitLost {
		t.Errorf("--no-recover: want exit status 3, got %d\n%s", code, wn.Stderr())
	}
	testkit.Eventually(t, 30*time.Second, "the worker to lose its membership", func() bool {
		return strings.Contains(w.Stderr(), "joining again with a new session")
	})
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "again")
	testkit.Eventually(t, 60*time.Second, "the resource to run again", func() bool { return len(readLines(t, file)) == 2 })
	tokens := readLines(t, file)
	first, err1 := strconv.ParseInt(tokens[0], 10, 64)
	second, err2 := strconv.ParseInt(tokens[1], 10, 64)
	if err1 != nil || err2 != nil || second <= first {
		t.Errorf("tokens %q: want the second larger", tokens)
	}
	if w.Exited() {
		t.Fatalf("the worker exited: %v\n%s", w.ExitErr(), w.Stderr())
	}
}
