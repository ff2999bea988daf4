//go:build consolescale

package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// Size of the simulated group.
const (
	scaleMembers   = 1000
	scaleResources = 10000
	scaleMoves     = 10 // resources moved per measured rebalancing
	multiBatch     = 500
)

// inBatches runs ops in transactions of multiBatch operations.
func inBatches(t *testing.T, ctx context.Context, sess *zkcoord.Session, ops []zkcoord.Op) []zkcoord.MultiResponse {
	t.Helper()
	var out []zkcoord.MultiResponse
	for len(ops) > 0 {
		n := min(len(ops), multiBatch)
		res, err := sess.Multi(ctx, ops[:n]...)
		if err != nil {
			t.Fatalf("multi: %v", err)
		}
		out = append(out, res...)
		ops = ops[n:]
	}
	return out
}

// rss returns the process's resident set size, from /proc.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestScale writes the layout of a rebalancer group of 1,000 members and
// 10,000 resources directly (as its clients would), serves the console to
// headless Chromium and measures the first load, the memory the console
// holds, and how soon the page shows a rebalancing that moves a few
// resources. It is a measurement, built only with the tag consolescale
// (go test -tags consolescale -run TestScale ./internal/console/); its
// figures are in docs/ui.md.
func TestScale(t *testing.T) {
	ctx := testkit.Ctx(t, 10*time.Minute)
	sess := connect(t)
	const base = "/scale/rebalance/big"
	for _, p := range []string{"clients", "resources", "barriers"} {
		if err := sess.EnsurePath(ctx, zkcoord.Join(base, p)); err != nil {
			t.Fatal(err)
		}
	}
	term, _ := json.Marshal(map[string]string{"coordinator": "c_0000000000"})
	if _, err := sess.Create(ctx, zkcoord.Join(base, "term"), term, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}

	// Members: ephemeral sequential client nodes with their host and pid.
	var ops []zkcoord.Op
	for i := range scaleMembers {
		data, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("worker-%d", i), "host": fmt.Sprintf("host-%03d", i%250),
			"pid": 1000 + i, "mode": "incremental"})
		ops = append(ops, zkcoord.CreateOp(zkcoord.Join(base, "clients", "_c_"+uuid.NewString()+"-c_"), data, zkcoord.FlagEphemeralSequential))
	}
	var members []string
	for _, r := range inBatches(t, ctx, sess, ops) {
		members = append(members, zkcoord.StripProtected(zkcoord.Base(r.String)))
	}
	slices.Sort(members)

	// Resources, the allocation and a barrier per resource held by its owner.
	ops = ops[:0]
	var resources []string
	for i := range scaleResources {
		r := fmt.Sprintf("partition-%05d", i)
		resources = append(resources, r)
		ops = append(ops, zkcoord.CreateOp(zkcoord.Join(base, "resources", r), nil, zkcoord.FlagPersistent))
	}
	inBatches(t, ctx, sess, ops)
	a := alloc.Balanced(members, resources)
	writeAlloc := func(gen int64, a alloc.Assignment) {
		data, err := alloc.Encode(alloc.Record{Term: 1, Generation: gen, Assignment: a})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sess.Set(ctx, zkcoord.Join(base, "resources"), data, -1); err != nil {
			t.Fatal(err)
		}
	}
	writeAlloc(1, a)
	barrierOp := func(r, client string, gen int64) zkcoord.Op {
		data, _ := json.Marshal(map[string]any{"client": client, "generation": gen})
		return zkcoord.CreateOp(zkcoord.Join(base, "barriers", r), data, zkcoord.FlagEphemeral)
	}
	ops = ops[:0]
	for c, rs := range a {
		for _, r := range rs {
			ops = append(ops, barrierOp(r, c, 1))
		}
	}
	inBatches(t, ctx, sess, ops)
	t.Logf("wrote %d members, %d resources, %d barriers", scaleMembers, scaleResources, scaleResources)

	// The console and the page.
	heapBefore, goBefore := heapInUse(), runtime.NumGoroutine()
	t.Logf("test process before the console: resident %s", rss())
	start := time.Now()
	srv := serve(t, connect(t), console.Options{Root: "/scale"})
	b := browser(t)
	run(t, b, time.Minute, chromedp.Navigate(srv.URL))
	settled := `c.querySelectorAll("tr[data-member]").length === %d && c.querySelector(".generation").textContent === "%d" && c.querySelector(".settled")`
	loaded := shown(t, b, base, fmt.Sprintf(settled, scaleMembers, 1))
	t.Logf("first load: page shows the group %v after the console started", loaded.Sub(start).Round(time.Millisecond))
	if st, err := getState(t, srv); err == nil {
		raw, _ := json.Marshal(st.Views[base])
		t.Logf("the group's view: %d kB of JSON", len(raw)>>10)
	}
	if n, err := cluster.Server(0).WatchCount(ctx); err == nil {
		t.Logf("watches on the server: %d", n)
	}
	heapAfter, goAfter := heapInUse(), runtime.NumGoroutine()
	t.Logf("console heap in use: %.1f MiB; goroutines: %d; test process resident %s",
		float64(heapAfter-heapBefore)/(1<<20), goAfter-goBefore, rss())

	// Rebalancings: scaleMoves resources move from one member to another;
	// the allocation is written, then the barriers change hands.
	for round := int64(2); round <= 4; round++ {
		// Two members swap scaleMoves/2 resources each, so that the
		// allocation stays balanced.
		x, y := members[round], members[len(members)-int(round)]
		const half = scaleMoves / 2
		next := a.Clone()
		next[x] = append(slices.Clone(a[x][half:]), a[y][:half]...)
		next[y] = append(slices.Clone(a[y][half:]), a[x][:half]...)
		slices.Sort(next[x])
		slices.Sort(next[y])
		owner := next.Owners()
		moving := append(slices.Clone(a[x][:half]), a[y][:half]...)
		t0 := time.Now()
		writeAlloc(round, next)
		shownGen := shown(t, b, base, fmt.Sprintf(`c.querySelector(".generation").textContent === "%d"`, round))
		var del, add []zkcoord.Op
		for _, r := range moving {
			del = append(del, zkcoord.DeleteOp(zkcoord.Join(base, "barriers", r), -1))
			add = append(add, barrierOp(r, owner[r], round))
		}
		inBatches(t, ctx, sess, del)
		inBatches(t, ctx, sess, add)
		t1 := time.Now()
		done := shown(t, b, base, fmt.Sprintf(settled, scaleMembers, round))
		var renderMs string
		run(t, b, time.Minute, chromedp.AttributeValue(`[id="card:`+base+`"]`, "data-render-ms", &renderMs, nil, chromedp.ByQuery))
		t.Logf("rebalancing %d (%d moved): generation shown %v after the allocation write; settled shown %v after the barriers moved; render %s ms",
			round, scaleMoves, shownGen.Sub(t0).Round(time.Millisecond), done.Sub(t1).Round(time.Millisecond), renderMs)
		a = next
	}
	if *screenshots { // the top of the page only: the whole grid is 1,000 rows
		var png []byte
		run(t, b, time.Minute, chromedp.CaptureScreenshot(&png))
		if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", "ui", "scale.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	heapEnd := heapInUse()
	t.Logf("console heap in use after the rebalancings: %.1f MiB", float64(heapEnd-heapBefore)/(1<<20))
}
