//go:build bench

package bench

import (
	"fmt"
	"math"
	"strings"
	"time"
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

// targetDelay is the setting the round-trip targets are judged in.
const targetDelay = time.Millisecond

// checkTargets compares the run with the targets of the design
// (design.md section 6), in round trips at 1 ms one-way delay.
func checkTargets(rep *report) []targetRow {
	var rows []targetRow
	at := &setting{id: delayID(targetDelay), delay: targetDelay}
	get := func(base, impl string) *summary { return rep.metric(at.metric(base)).impl(impl) }
	rttMS := ms(int64(at.rtt()))
	missing := func(target string) { rows = append(rows, targetRow{target, notMeasured, "–"}) }

	// Locks.
	lockT := "lock acquire+release, uncontended, 1 ms: ≤ 1.15× the protocol minimum (2 round trips)"
	if zk, fl := get(mLock, zkcoordName), get(mFloor, gozkName); zk != nil {
		r := zk.P50 / rttMS
		m := fmt.Sprintf("%s ms = %.2f round trips = %.2f× the minimum", num(zk.P50), r, r/2)
		if fl != nil {
			m += fmt.Sprintf("; a bare create+delete (the same 2 round trips and 2 quorum writes) takes %.2f round trips here", fl.P50/rttMS)
		}
		rows = append(rows, targetRow{lockT, m, verdict(r <= 2*1.15)})
		if fl != nil {
			rows = append(rows, targetRow{"lock acquire+release, 1 ms: ≤ 1.15× a create+delete (the minimum as measured: same round trips, same writes)",
				fmt.Sprintf("%s ms vs %s ms: %.2f×", num(zk.P50), num(fl.P50), zk.P50/fl.P50), verdict(zk.P50 <= 1.15*fl.P50)})
		}
	} else {
		missing(lockT)
	}
	faster := func(target, base string, others ...string) {
		zk := get(base, zkcoordName)
		if zk == nil {
			missing(target)
			return
		}
		ok, parts := true, []string{"zkcoord " + num(zk.P50) + " ms"}
		for _, o := range others {
			s := get(base, o)
			if s == nil {
				parts = append(parts, o+" not measured")
				ok = false
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s ms (ratio %.2f)", o, num(s.P50), zk.P50/s.P50))
			ok = ok && zk.P50 < s.P50
		}
		rows = append(rows, targetRow{target, strings.Join(parts, ", "), verdict(ok)})
	}
	faster("lock acquire+release, 1 ms: faster than Curator and Kazoo", mLock, curatorName, kazooName)
	hoT := fmt.Sprintf("lock handoff, %d sessions, 1 ms: ≤ 1.15× the protocol minimum (2 round trips)", handoffN)
	if zk := get(mHandoff, zkcoordName); zk != nil {
		r := zk.P50 / rttMS
		m := fmt.Sprintf("%s ms = %.2f round trips = %.2f× the minimum", num(zk.P50), r, r/2)
		if cu := get(mHandoff, curatorName); cu != nil {
			m += fmt.Sprintf(" (Curator: %.2f round trips)", cu.P50/rttMS)
		}
		rows = append(rows, targetRow{hoT, m, verdict(r <= 2*1.15)})
	} else {
		missing(hoT)
	}

	// Graceful failover.
	gfT := "graceful leader failover, 10 candidates, 1 ms: ≤ Curator LeaderLatch + 1 round trip"
	if zk, cu := get(failoverMetric(10), zkcoordName), get(failoverMetric(10), curatorName); zk != nil && cu != nil {
		rows = append(rows, targetRow{gfT,
			fmt.Sprintf("%s ms (%.2f round trips) vs Curator %s ms (%.2f) + 1 = %.2f round trips", num(zk.P50), zk.P50/rttMS,
				num(cu.P50), cu.P50/rttMS, cu.P50/rttMS+1), verdict(zk.P50 <= cu.P50+rttMS)})
	} else {
		missing(gfT)
	}
	var woken []string
	wokenOK := true
	for _, d := range metricDefs(rep.Quick) {
		if !strings.HasPrefix(d.base, "failover-") {
			continue
		}
		s := rep.metric(d.id).impl(zkcoordName)
		if s == nil {
			continue
		}
		w := s.Extra["woken_per_change"]
		woken = append(woken, fmt.Sprintf("%s: %s", strings.TrimPrefix(d.id, "failover-"), num(w)))
		wokenOK = wokenOK && w <= 1
	}
	if len(woken) > 0 {
		rows = append(rows, targetRow{"graceful leader failover: 1 candidate woken per change, at any size",
			"candidates woken per change: " + strings.Join(woken, "; "), verdict(wokenOK)})
	}

	// Crash failover. The server expires a session a timeout after the
	// last request or ping it had from the client, which comes before the
	// kill by anything up to a third of the timeout (the ping interval):
	// the total from the kill can end before the timeout. The part after
	// the expiry is what the implementations control.
	for _, ct := range crashTimeouts(rep.Quick) {
		base := crashMetric("leader", ct.timeout)
		sto := fmt.Sprintf("%g s", ct.timeout.Seconds())
		limit := ms(int64(ct.timeout)) + 2*rttMS
		for _, name := range []string{zkcoordName + " election", zkcoordName + " failover"} {
			kind := strings.TrimPrefix(name, "zkcoord ")
			t := fmt.Sprintf("crash failover (%s), session timeout %s, 1 ms: ≤ timeout + 2 round trips", kind, sto)
			zk := get(base, name)
			if zk == nil {
				missing(t)
				continue
			}
			rows = append(rows, targetRow{t,
				fmt.Sprintf("p50 %s ms from the kill (limit %s; the server expired the session %s ms after the kill)",
					num(zk.P50), num(limit), num(zk.Extra["expiry_ms"])), verdict(zk.P50 <= limit)})
			after := zk.Extra["after_ms"]
			rows = append(rows, targetRow{
				fmt.Sprintf("crash failover (%s), %s: from the expiry to the new leader ≤ 2 round trips", kind, sto),
				fmt.Sprintf("%s ms = %.1f round trips", num(after), after/rttMS), verdict(after <= 2*rttMS)})
		}
		t := fmt.Sprintf("crash failover, session timeout %s, 1 ms: zkcoord election no slower than Curator or Kazoo", sto)
		zk := get(base, zkcoordName+" election")
		if zk == nil {
			missing(t)
			continue
		}
		ok := true
		parts := []string{fmt.Sprintf("after the expiry: zkcoord %s ms", num(zk.Extra["after_ms"]))}
		totals := []string{"zkcoord " + num(zk.P50)}
		for _, o := range []string{curatorName + " LeaderLatch", kazooName + " Election"} {
			s := get(base, o)
			if s == nil {
				parts = append(parts, o+" not measured")
				ok = false
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s ms", o, num(s.Extra["after_ms"])))
			totals = append(totals, fmt.Sprintf("%s %s", o, num(s.P50)))
			ok = ok && zk.Extra["after_ms"] <= s.Extra["after_ms"]
		}
		rows = append(rows, targetRow{t, strings.Join(parts, ", ") + " (from the kill: " + strings.Join(totals, ", ") +
			" ms, which differ mostly by when each victim last pinged)", verdict(ok)})
	}

	// Rebalancing.
	for _, set := range reportSettings() {
		for _, sz := range rebalanceSizes(rep.Quick, set) {
			if sz.clients != 50 || sz.resources != 1000 {
				continue
			}
			id := set.metric(joinMetric(sz))
			t := "rebalance after a join, 50 × 1,000, " + set.name() + ": ≥ 25× faster than Kazoo SetPartitioner"
			inc := rep.metric(id).impl(zkcoordName + " incremental")
			kz := rep.metric(id).impl("Kazoo SetPartitioner")
			if inc == nil || kz == nil {
				missing(t)
				continue
			}
			rows = append(rows, targetRow{t,
				fmt.Sprintf("incremental %s ms vs %s ms: %.1f× faster", num(inc.P50), num(kz.P50), kz.P50/inc.P50),
				verdict(inc.P50*25 <= kz.P50)})
			if set.loopback() {
				limit := math.Ceil(float64(sz.resources)/float64(sz.clients+1)) + 1
				rows = append(rows, targetRow{"rebalance after a join, 50 × 1,000: resources paused ≤ ceil(M/N)+1",
					fmt.Sprintf("%s paused (limit %.0f)", num(inc.Extra["paused"]), limit), verdict(inc.Extra["paused"] <= limit)})
			}
		}
	}
	for _, sz := range rebalanceSizes(rep.Quick, &setting{}) {
		if sz.resources != 10000 || sz.clients != 1000 {
			continue
		}
		j := rep.metric(joinMetric(sz)).impl(zkcoordName + " incremental")
		l := rep.metric(leaveMetric(sz)).impl(zkcoordName + " incremental")
		if j == nil || l == nil {
			continue
		}
		title := "1,000 clients × 10,000 resources in one group: rebalance ≤ 2 s"
		if sz.weighted {
			title = "1,000 clients × 10,000 resources with weights: rebalance ≤ 2 s"
		}
		rows = append(rows, targetRow{title,
			fmt.Sprintf("join %s ms, leave %s ms (incremental, loopback)", num(j.P50), num(l.P50)), verdict(j.P50 <= 2000 && l.P50 <= 2000)})
	}
	rows = append(rows, targetRow{"ZooKeeper requests per change O(N + moved)", "see “ZooKeeper requests per rebalancing” below", "see below"})
	return rows
}
