//go:build bench

package bench

import (
	"fmt"
	"math"
	"strings"
)

// targetRow is one target of the design checked against a run.
type targetRow struct {
	target, measured, verdict string
}

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

const notMeasured = "not measured"

// checkTargets compares the run with the targets of the design.
func checkTargets(rep *report) []targetRow {
	var rows []targetRow
	p50 := func(metric, impl string) (float64, bool) {
		s := rep.metric(metric).impl(impl)
		if s == nil {
			return 0, false
		}
		return s.P50, true
	}
	// speedup checks zkcoord's median against at most limit × other's.
	speedup := func(target, metric, other string, limit float64) {
		zk, ok1 := p50(metric, zkcoordName)
		o, ok2 := p50(metric, other)
		if !ok1 || !ok2 {
			rows = append(rows, targetRow{target, notMeasured, "–"})
			return
		}
		rows = append(rows, targetRow{target,
			fmt.Sprintf("%s ms vs %s ms: ratio %.2f (limit %.2f)", num(zk), num(o), zk/o, limit), verdict(zk <= limit*o)})
	}

	speedup("lock acquire+release, uncontended: ≥ 2× Curator", mLock, curatorName, 0.5)
	if zk, ok := p50(mLock, zkcoordName); ok {
		if f, ok := p50(mFloor, gozkName); ok {
			rows = append(rows, targetRow{"lock acquire+release, uncontended: ≤ 1.2× the raw create+delete floor",
				fmt.Sprintf("%s ms vs floor %s ms: %.2f×", num(zk), num(f), zk/f), verdict(zk <= 1.2*f)})
		}
	}
	speedup(fmt.Sprintf("lock handoff, %d sessions contending: ≥ 2× Curator", handoffN), mHandoff, curatorName, 0.5)
	speedup(fmt.Sprintf("%d goroutines, distinct locks, one session: ≥ 5× Curator with %d threads", distinctN, distinctN),
		mDistinct, curatorName, 0.2)

	// Failover.
	var (
		sizes      []string
		lo, hi     = math.Inf(1), 0.0
		allHalf    = true
		measured   []string
		wokenOK    = true
		wokenParts []string
		any        bool
	)
	for _, sz := range failoverSizes(rep.Quick) {
		id := failoverMetric(sz.n)
		zk, ok1 := p50(id, zkcoordName)
		cu, ok2 := p50(id, curatorName)
		if !ok1 {
			continue
		}
		any = true
		sizes = append(sizes, fmt.Sprint(sz.n))
		lo, hi = min(lo, zk), max(hi, zk)
		if ok2 {
			measured = append(measured, fmt.Sprintf("%d: %s vs %s ms (%.2f)", sz.n, num(zk), num(cu), zk/cu))
			allHalf = allHalf && zk <= 0.5*cu
		} else {
			measured = append(measured, fmt.Sprintf("%d: %s ms, no Curator result", sz.n, num(zk)))
			allHalf = false
		}
		s := rep.metric(id).impl(zkcoordName)
		w := s.Extra["woken_per_change"]
		wokenParts = append(wokenParts, fmt.Sprintf("%d: %s woken, %s notifications", sz.n, num(w), num(s.PerOp.Notified)))
		wokenOK = wokenOK && w <= 1.0
	}
	if any {
		rows = append(rows,
			targetRow{"graceful leader failover: p50 ≤ 0.5× Curator LeaderLatch", strings.Join(measured, "; "), verdict(allHalf)},
			targetRow{"graceful leader failover: flat from 10 to 1,000 candidates (largest p50 ≤ 1.5× smallest)",
				fmt.Sprintf("p50 from %s to %s ms over %s candidates (%.2f×)", num(lo), num(hi), strings.Join(sizes, ", "), hi/lo),
				verdict(hi <= 1.5*lo && len(sizes) >= 2)},
			targetRow{"graceful leader failover: 1 candidate woken per change", strings.Join(wokenParts, "; "), verdict(wokenOK)})
	}
	rows = append(rows, targetRow{"crash failover: new leader within session timeout + 2 ticks; no overlap",
		"not part of this suite: checked by the election package's fault tests", "–"})

	// Rebalancing.
	for _, sz := range rebalanceSizes(rep.Quick) {
		if sz.clients != 50 || sz.resources != 1000 {
			continue
		}
		id := joinMetric(sz)
		inc := rep.metric(id).impl(zkcoordName + " incremental")
		kz := rep.metric(id).impl("Kazoo SetPartitioner")
		if inc != nil && kz != nil {
			rows = append(rows, targetRow{"rebalance after a join, 50 clients × 1,000 resources: ≥ 25× faster than Kazoo SetPartitioner",
				fmt.Sprintf("incremental %s ms vs %s ms: %.1f× faster", num(inc.P50), num(kz.P50), kz.P50/inc.P50),
				verdict(inc.P50*25 <= kz.P50)})
		} else {
			rows = append(rows, targetRow{"rebalance after a join, 50 × 1,000: ≥ 25× faster than Kazoo", notMeasured, "–"})
		}
		if inc != nil {
			limit := math.Ceil(float64(sz.resources)/float64(sz.clients+1)) + 1
			rows = append(rows, targetRow{"rebalance after a join, 50 × 1,000: resources paused ≤ ceil(M/N)+1",
				fmt.Sprintf("%s paused (limit %.0f)", num(inc.Extra["paused"]), limit), verdict(inc.Extra["paused"] <= limit)})
		}
	}
	for _, sz := range rebalanceSizes(rep.Quick) {
		if sz.resources != 10000 || sz.clients != 1000 {
			continue
		}
		j := rep.metric(joinMetric(sz)).impl(zkcoordName + " incremental")
		l := rep.metric(leaveMetric(sz)).impl(zkcoordName + " incremental")
		if j == nil || l == nil {
			continue
		}
		rows = append(rows, targetRow{"1,000 clients × 10,000 resources in one group: rebalance ≤ 2 s",
			fmt.Sprintf("join %s ms, leave %s ms (incremental)", num(j.P50), num(l.P50)), verdict(j.P50 <= 2000 && l.P50 <= 2000)})
	}
	rows = append(rows, targetRow{"ZooKeeper requests per change O(N + moved)", "see “ZooKeeper requests per rebalancing” below", "see below"})
	return rows
}
