//go:build unix

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/launch"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// rebalance --weight: a worker of weight 3 gets three times the share of
// one that gives no weight, and status shows the weights.
func TestRebalanceWeight(t *testing.T) {
	t.Parallel()
	group := strings.TrimPrefix(strings.ReplaceAll(unique(t), "/", "-"), "-")
	resources := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	mustZkc(t, append([]string{"resources", "add", group}, resources...)...)
	var h oracle.History
	w1 := startWorkerT(t, &h, group, "w1", "--exec", "sleep 600")
	w3 := startWorkerT(t, &h, group, "w3", "--weight", "3", "--exec", "sleep 600")
	testkit.Eventually(t, 45*time.Second, "shares 2 and 6", func() bool {
		held := h.Holdings()
		d := statusJSON(t, group)
		return len(held["w1"]) == 2 && len(held["w3"]) == 6 && !d.Rebalancing && len(d.Members) == 2
	})
	d := statusJSON(t, group)
	for _, m := range d.Members {
		if want := map[string]int64{"w1": 1, "w3": 3}[m.Name]; m.Weight != want {
			t.Errorf("member %s: weight %d, want %d", m.Name, m.Weight, want)
		}
	}
	for _, w := range []*launch.Proc{w1, w3} {
		if err := w.Terminate(20 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if v := h.CheckExclusive(); len(v) > 0 {
		t.Fatalf("a resource ran twice at once: %v", v)
	}
	for _, bad := range []string{"0", "-1", "1000001"} {
		if r := zkc(t, "rebalance", group, "--weight", bad, "--exec", "true"); r.code != exitUsage || !strings.Contains(r.stderr, "--weight") {
			t.Errorf("--weight %s: exit %d, %s", bad, r.code, r.stderr)
		}
	}
}
