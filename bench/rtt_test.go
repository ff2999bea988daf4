//go:build bench

package bench

import (
	"fmt"
	"strings"
	"time"
)

// An opRTT is one operation measured in round trips: the protocol's
// minimum, how it is made up, and how many round trips each
// implementation puts on the critical path by its design (from its code:
// requests sent back to back without waiting count once).
type opRTT struct {
	base    string // the metric id, without the setting
	minimum float64
	why     string
	design  map[string]float64
}

// opsInRTT are the operations reported in round trips.
func opsInRTT() []opRTT {
	all := func(n float64) map[string]float64 {
		return map[string]float64{zkcoordName: n, gozkName: n, curatorName: n, kazooName: n}
	}
	return []opRTT{
		{mRead, 1, "one request and its answer", all(1)},
		{mFloor, 2, "a create, then a delete: two writes, one after the other", all(2)},
		{mLock, 2, "acquire: the create, with the listing sent right behind it (one round trip); release: the delete",
			// Kazoo 2.8 lists before every create but its Lock's first, for a
			// node of its own left by a lost reply.
			map[string]float64{zkcoordName: 2, gozkName: 3, curatorName: 3, kazooName: 4}},
		{mHandoff, 2, "the holder's delete reaches the server (½), the notification reaches the next in line (½), " +
			"which lists the lock directory (1)", all(2)},
		{failoverMetric(10), 2, "Resign's write reaches the server (½), the notification the successor (½), which lists " +
			"the candidates (1). zkcoord's design adds its office: the reads of the term, leader and own nodes and a " +
			"transaction (term bump, leader node), 3 at the least with the reads sent with the listing and the watches " +
			"sent right behind the transaction, as it does",
			map[string]float64{zkcoordName: 3, curatorName: 2, kazooName: 2}},
	}
}

// rttOf returns the injected round-trip time of a metric's setting, 0 on
// loopback.
func rttOf(metric string) time.Duration {
	_, set := settingOf(metric)
	for _, d := range delayedDelays {
		if delayID(d) == set {
			return 2 * d
		}
	}
	return 0
}

// inRTT expresses a latency in ms as round trips of the metric's setting.
func inRTT(metric string, v float64) float64 {
	rtt := rttOf(metric)
	if rtt == 0 {
		return 0
	}
	return v / ms(int64(rtt))
}

// renderRoundTrips writes the settings side by side: each operation's
// median on loopback and, in the delayed settings, in milliseconds and in
// round trips, beside the protocol's minimum.
func renderRoundTrips(b *strings.Builder, rep *report, defs []metricDef) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	sets := reportSettings()
	var delayed []*setting
	for _, s := range sets[1:] {
		if rep.metric(s.metric(mLock)) != nil || rep.metric(s.metric(mFloor)) != nil {
			delayed = append(delayed, s)
		}
	}
	if len(delayed) == 0 {
		return
	}
	title := map[string]string{}
	for _, d := range defs {
		if d.set.loopback() {
			title[d.base] = d.title
		}
	}
	w("## Settings side by side, in round trips\n\n")
	w("Loopback: one standalone server, fsync off, no network. Deployed-like: a 3-server ensemble with fsync on, ")
	w("every client behind a proxy that delays each direction by ")
	for i, s := range delayed {
		if i > 0 {
			w(" or ")
		}
		w("%g ms (a round trip of %g ms)", float64(s.delay)/float64(time.Millisecond), float64(s.rtt())/float64(time.Millisecond))
	}
	w(". \"Round trips\" is the median divided by that injected round-trip time; \"by design\" counts the round trips ")
	w("each implementation puts on the critical path (requests sent back to back count once). The single read shows ")
	w("what one round trip costs a client in practice, the proxy's and the server's own time included; the ")
	w("create+delete floor shows what two writes, each synced to disk by a quorum, add.\n\n")
	for _, op := range opsInRTT() {
		t := title[op.base]
		if t == "" {
			t = op.base
		}
		unit := "round trips"
		if op.minimum == 1 {
			unit = "round trip"
		}
		w("### %s\n\nProtocol minimum: **%g %s**: %s.\n\n", t, op.minimum, unit, op.why)
		w("| implementation | round trips by design | loopback p50 (ms) |")
		for _, s := range delayed {
			w(" %s: p50 (ms) | %s: round trips |", s.id, s.id)
		}
		last := delayed[len(delayed)-1]
		w(" requests/op (%s) | writes/op (%s) |\n|---|---|---|", last.id, last.id)
		for range delayed {
			w("---|---|")
		}
		w("---|---|\n")
		for _, name := range implOrder() {
			seen := false
			for _, s := range sets {
				if rep.metric(s.metric(op.base)).impl(name) != nil {
					seen = true
				}
			}
			if !seen {
				continue
			}
			design := "–"
			if v, ok := op.design[name]; ok {
				design = fmt.Sprintf("%g", v)
			}
			shown := name
			if isZkcoord(name) {
				shown = "**" + name + "**"
			}
			w("| %s | %s |", shown, design)
			if s := rep.metric(op.base).impl(name); s != nil {
				w(" %s |", num(s.P50))
			} else {
				w(" – |")
			}
			for _, set := range delayed {
				id := set.metric(op.base)
				if s := rep.metric(id).impl(name); s != nil {
					w(" %s | %.2f |", num(s.P50), inRTT(id, s.P50))
				} else {
					w(" – | – |")
				}
			}
			if s := rep.metric(last.metric(op.base)).impl(name); s != nil {
				w(" %s | %s |\n", num(s.PerOp.Packets), num(s.PerOp.Writes))
			} else {
				w(" – | – |\n")
			}
		}
		w("\n")
	}
	// Rebalancing has no round-trip minimum: the ratio is the figure.
	var rows []string
	for _, set := range sets {
		for _, sz := range rebalanceSizes(rep.Quick, set) {
			if sz.clients != 50 || sz.resources != 1000 {
				continue
			}
			id := set.metric(joinMetric(sz))
			inc := rep.metric(id).impl(zkcoordName + " incremental")
			kz := rep.metric(id).impl("Kazoo SetPartitioner")
			if inc == nil || kz == nil {
				continue
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %.1f× |", set.name(), num(inc.P50), num(kz.P50), kz.P50/inc.P50))
		}
	}
	if len(rows) > 0 {
		w("### Rebalance after one client joins, 50 clients × 1,000 resources\n\n")
		w("| setting | zkcoord incremental p50 (ms) | Kazoo SetPartitioner p50 (ms) | zkcoord faster by |\n|---|---|---|---|\n")
		for _, r := range rows {
			w("%s\n", r)
		}
		w("\n")
	}
}
