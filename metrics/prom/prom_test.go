package prom_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/metrics/prom"
)

// scrape returns the metric lines (no comments) that start with prefix.
func scrape(reg *prometheus.Registry, prefix string) []string {
	srv := httptest.NewServer(prom.Handler(reg))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func TestRecorder(t *testing.T) {
	reg := prometheus.NewRegistry()
	r, err := prom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	r.SessionState(zkcoord.Connected)
	r.SessionState(zkcoord.Suspended)
	r.SessionState(zkcoord.Reconnected)
	r.Leading("/svc", true)
	r.LockHeld("/lock", true)
	r.LockHeld("/lock", false)
	r.Assigned("orders", 4)
	r.Rebalanced("orders", 300*time.Millisecond)
	r.Rebalanced("orders", 2*time.Second)
	r.ChildRestarted("orders")

	got := strings.Join(scrape(reg, "zkcoord_"), "\n")
	for _, want := range []string{
		`zkcoord_session_state{state="reconnected"} 1`,
		`zkcoord_session_state{state="suspended"} 0`,
		`zkcoord_session_transitions_total{state="suspended"} 1`,
		`zkcoord_leader{path="/svc"} 1`,
		`zkcoord_lock_held{path="/lock"} 0`,
		`zkcoord_assigned_resources{group="orders"} 4`,
		`zkcoord_rebalances_total{group="orders"} 2`,
		`zkcoord_rebalance_duration_seconds_bucket{group="orders",le="0.32"} 1`,
		`zkcoord_rebalance_duration_seconds_count{group="orders"} 2`,
		`zkcoord_child_restarts_total{group="orders"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}

	// Registering twice with one registry fails.
	if _, err := prom.New(reg); err == nil {
		t.Error("a second Recorder registered the same metrics")
	}
}

func Example() {
	reg := prometheus.NewRegistry()
	rec, err := prom.New(reg)
	if err != nil {
		panic(err)
	}
	// Serve reg with prom.Handler(reg) on /metrics; here the recorder is fed
	// by hand.
	rec.SessionState(zkcoord.Connected)
	rec.Assigned("orders", 3)
	rec.Rebalanced("orders", 1500*time.Millisecond)
	for _, l := range scrape(reg, "zkcoord_") {
		if strings.Contains(l, `state="connected"`) || strings.Contains(l, "assigned") || strings.Contains(l, "rebalances_total") {
			fmt.Println(l)
		}
	}
	// Output:
	// zkcoord_assigned_resources{group="orders"} 3
	// zkcoord_rebalances_total{group="orders"} 1
	// zkcoord_session_state{state="connected"} 1
	// zkcoord_session_transitions_total{state="connected"} 1
}
