//go:build bench

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
)

// report is everything a run produced; it is written as
// docs/bench/results.json and rendered as docs/benchmarks.md.
type report struct {
	Date     string              `json:"date"`
	Command  string              `json:"command"`
	Quick    bool                `json:"quick"`
	Elapsed  string              `json:"elapsed"`
	Machine  map[string]string   `json:"machine"`
	Versions map[string]string   `json:"versions"`
	Metrics  []metricResult      `json:"metrics,omitempty"`
	Failures map[string][]string `json:"failures,omitempty"`
	Partial  []partialRun        `json:"partial,omitempty"`
}

type metricResult struct {
	ID    string    `json:"id"`
	Title string    `json:"title"`
	Unit  string    `json:"unit"`
	Impls []summary `json:"impls"`
}

// metricDef describes how a metric is reported.
type metricDef struct {
	id, title, unit string
	what            string   // how it is measured
	extras          []string // extra columns, by key
	chart           bool
	set             *setting // the setting it is measured in
	base            string   // the id without the setting
}

var extraNames = map[string]string{
	"op_p50_ms":        "median latency of one pair (ms)",
	"ops_per_s":        "pairs/s",
	"woken_per_change": "candidates woken per change",
	"paused":           "resources paused",
	"expiry_ms":        "expiry (ms after the kill)",
	"after_ms":         "after expiry (ms)",
	"work_ms":          "successor's work after its notification (ms)",
	"items_per_s":      "items/s",
	"watches":          "watches on the servers",
	"nodes":            "nodes loaded",
}

// reportSettings are the settings of a full run, in the report's order
// (without a cluster: for naming and sizes only).
func reportSettings() []*setting {
	out := []*setting{{}}
	for _, d := range delayedDelays {
		out = append(out, &setting{id: delayID(d), delay: d})
	}
	return out
}

// metricDefs lists every metric a run may produce, setting by setting.
func metricDefs(quick bool) []metricDef {
	var defs []metricDef
	for _, set := range reportSettings() {
		defs = append(defs, settingDefs(quick, set)...)
	}
	return defs
}

// settingDefs lists the metrics of one setting.
func settingDefs(quick bool, set *setting) []metricDef {
	all := []metricDef{
		{id: mFloor, title: "Floor: create+delete of an ephemeral sequential node", unit: "ms per pair", chart: true,
			what: "One client creates an ephemeral sequential node and deletes it, one pair after the other. " +
				"go-zookeeper is the raw floor every Go lock is measured against; zkcoord here is the plain Session " +
				"(Create then Delete, with a context), showing what the Session layer costs."},
		{id: mLock, title: "Lock acquire+release, uncontended", unit: "ms per pair", chart: true,
			what: "One client takes a free lock and releases it, in a loop: zkcoord lock.Mutex, go-zookeeper's zk.Lock, " +
				"Curator's InterProcessMutex, Kazoo's Lock."},
		{id: mHandoff, title: fmt.Sprintf("Lock handoff, %d sessions contending", handoffN), unit: "ms per handoff", chart: true,
			what: fmt.Sprintf("%d clients (each its own session, one thread or goroutine each) acquire and release one lock in a loop. "+
				"A sample is the interval between two consecutive acquisitions: the time the lock takes to pass "+
				"from one holder to the next.", handoffN)},
		{id: mDistinct, title: fmt.Sprintf("%d goroutines (threads) on distinct locks over one session", distinctN),
			unit: "ms per pair (wall time ÷ pairs)", chart: true, extras: []string{"op_p50_ms", "ops_per_s"},
			what: fmt.Sprintf("One client; %d goroutines (Curator and Kazoo: threads), each with its own lock, acquire and release "+
				"in a loop from a common start. A sample is one round's wall time divided by the pairs done: "+
				"the inverse of throughput.", distinctN)},
		{id: mRead, title: "One read (exists), a single round trip", unit: "ms", chart: true,
			what: "go-zookeeper's Exists on one node, one after the other: the round trip as a client sees it, " +
				"the proxy's and the server's own time included."},
	}
	var defs []metricDef
	for _, d := range all {
		if d.id == mDistinct && !set.loopback() {
			continue // a throughput figure, bounded by this machine: loopback only
		}
		defs = append(defs, d)
	}
	for _, sz := range failoverSizes(quick, set) {
		defs = append(defs, metricDef{id: failoverMetric(sz.n), chart: true,
			title: fmt.Sprintf("Graceful leader failover, %d candidates", sz.n), unit: "ms",
			extras: []string{"woken_per_change", "work_ms"},
			what: fmt.Sprintf("%d candidates over %d sessions. The leader resigns (zkcoord: Leadership.Resign; "+
				"Curator: LeaderLatch.close; Kazoo: the Election's function returns); a sample is the time from that call "+
				"to the successor's notice of leadership (zkcoord: EventElected, after it has checked its node, bumped the term "+
				"and written the leader node; Curator: isLeader; Kazoo: the function is called). Notifications per change "+
				"come from the server; candidates woken are zkcoord's own count of re-examinations caused by a watch; the successor's "+
				"work is zkcoord's time from the notification that woke the successor to its EventElected.",
				sz.n, min(sz.n, electionSessions))})
	}
	for _, sz := range rebalanceSizes(quick, set) {
		m := fmt.Sprintf("%d clients × %d resources", sz.clients, sz.resources)
		absent := ""
		if sz.weighted {
			m += " with weights"
			absent = " With weights: clients weigh 1 to 4 (WithWeight; the joining client 3) and resources 1 to 8 " +
				"(WithResourceWeights), incremental mode only; settled means every resource runs where the weighted " +
				"allocation (alloc.WeightedSticky) puts it, shares being in proportion to the weights." +
				" Kazoo's SetPartitioner has no weights."
		}
		if sz.kazooRounds < 0 && !sz.weighted {
			absent = " Kazoo's SetPartitioner was not attempted at this size, which is beyond the matrix of the " +
				"comparison (it stops at 200 × 10,000): one Python process would drive 1,000 clients with three " +
				"threads each, and every one of the thousand joins of the set-up makes every member release and " +
				"re-acquire all of its items."
		}
		defs = append(defs,
			metricDef{id: joinMetric(sz), title: "Rebalance after one client joins, " + m, unit: "ms", chart: true,
				extras: []string{"paused"},
				what: "A sample is the time from the joining client's Start (Kazoo: the SetPartitioner constructor, " +
					"on a connected client) until every resource is run again by exactly one client and the shares differ " +
					"by at most one. Resources paused: how many a running owner stopped (Unassigned; Kazoo: items held when " +
					"it released its set). Requests, writes and notifications are per change. zkcoord clients run with " +
					"WithMinInterval(0) (rebalance on every change); Kazoo's SetPartitioner with " +
					fmt.Sprintf("time_boundary=%g, the smallest it accepts ", kazooTimeBoundary) +
					"(the default is 30 s; with 0.05 s, the value of the reference measurement, changes took about " +
					"twice as long in a trial run on this machine)." + absent},
			metricDef{id: leaveMetric(sz), title: "Rebalance after one client leaves, " + m, unit: "ms", chart: true,
				extras: []string{"paused"},
				what: "The client that joined leaves (Stop; Kazoo: finish()); a sample is the time until every " +
					"resource runs again, evenly shared. The leaver's own resources count as paused." + absent})
	}
	if set.delay == crashDelay {
		defs = append(defs, crashDefs(quick)...)
	}
	defs = append(defs, cacheDefs(quick)...)
	if set.loopback() {
		defs = append(defs, queueDefs(quick)...)
		defs = append(defs, metricDef{id: mMemory, title: "Memory per client", unit: "KiB resident per client", chart: true})
	}
	for i := range defs {
		defs[i].set = set
		defs[i].base = defs[i].id
		defs[i].id = set.metric(defs[i].id)
		if !set.loopback() {
			defs[i].title += ", " + set.name()
		}
	}
	return defs
}

// isZkcoord tells zkcoord's implementations from the others.
func isZkcoord(name string) bool { return strings.HasPrefix(name, zkcoordName) }

func (r *report) metric(id string) *metricResult {
	for i := range r.Metrics {
		if r.Metrics[i].ID == id {
			return &r.Metrics[i]
		}
	}
	return nil
}

func (m *metricResult) impl(name string) *summary {
	if m == nil {
		return nil
	}
	for i := range m.Impls {
		if m.Impls[i].Impl == name && m.Impls[i].N > 0 {
			return &m.Impls[i]
		}
	}
	return nil
}

// buildMetrics turns raw results into the report's metrics, in the order
// of defs, implementations in the order they ran.
func buildMetrics(res *results, defs []metricDef, order []string) []metricResult {
	var out []metricResult
	for _, d := range defs {
		byImpl := res.data[d.id]
		if len(byImpl) == 0 {
			continue
		}
		m := metricResult{ID: d.id, Title: d.title, Unit: d.unit}
		for _, name := range order {
			if x, ok := byImpl[name]; ok {
				m.Impls = append(m.Impls, summarize(name, x))
			}
		}
		out = append(out, m)
	}
	return out
}

// writeReport writes results.json, the charts and benchmarks.md.
func writeReport(rep *report, defs []metricDef, outDir string) error {
	dataDir := filepath.Join(outDir, "bench")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	b, err := encodeReport(rep)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dataDir, "results.json"), b, 0o644); err != nil {
		return err
	}
	// Charts of metrics this run did not measure would be stale.
	old, err := filepath.Glob(filepath.Join(dataDir, "*.png"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	charts := map[string]string{}
	for _, d := range defs {
		m := rep.metric(d.id)
		if m == nil || !d.chart {
			continue
		}
		var rows []summary
		for _, s := range m.Impls {
			if s.N > 0 {
				rows = append(rows, s)
			}
		}
		if len(rows) == 0 {
			continue
		}
		name := d.id + ".png"
		if err := barChart(filepath.Join(dataDir, name), d.title, d.unit, rows, isZkcoord); err != nil {
			return fmt.Errorf("chart %s: %w", d.id, err)
		}
		charts[d.id] = "bench/" + name
	}
	md := renderMarkdown(rep, defs, charts)
	return os.WriteFile(filepath.Join(outDir, "benchmarks.md"), []byte(md), 0o644)
}

// encodeReport writes the report as indented JSON, except that each metric
// takes one line: with every sample listed, that keeps the file small and
// still easy to read and diff.
func encodeReport(rep *report) ([]byte, error) {
	head := *rep
	head.Metrics = nil
	b, err := json.MarshalIndent(head, "", "  ")
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(bytes.TrimRight(b, "\n"), []byte("}"))
	b = append(bytes.TrimRight(b, "\n "), []byte(",\n  \"metrics\": [\n")...)
	for i, m := range rep.Metrics {
		line, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		b = append(append(b, "    "...), line...)
		if i < len(rep.Metrics)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return append(b, "  ]\n}\n"...), nil
}

// num formats a measurement for a table.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return short(v)
}

// ratio formats a ratio of zkcoord to a peer, with the speed-up it means.
func ratio(zk, other float64) string {
	if zk <= 0 || other <= 0 {
		return "–"
	}
	r := zk / other
	if r <= 1 {
		return fmt.Sprintf("%.2f (%.1f× faster)", r, 1/r)
	}
	return fmt.Sprintf("%.2f (%.1f× slower)", r, r)
}

func renderMarkdown(rep *report, defs []metricDef, charts map[string]string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmarks\n\n")
	w("zkcoord measured side by side with what its users would pick instead: go-zookeeper/zk used directly, ")
	w("Apache Curator (Java) and Kazoo (Python), in one run, with interleaved rounds: on loopback against one ")
	w("server, and deployed-like against a 3-server ensemble with fsync on, every client behind a proxy that ")
	w("delays each direction by 0.25 ms or 1 ms, where each operation is also counted in round trips; and ")
	w("crash failover of separate processes.\n\n")
	w("This file is generated by `make bench` (bench/report_test.go); the Findings section comes from ")
	w("bench/findings.md. Raw samples: [bench/results.json](bench/results.json).\n\n")
	if rep.Quick {
		w("> **Quick run** (-bench.quick): few iterations and small sizes; not for drawing conclusions.\n\n")
	}
	w("## The run\n\n| | |\n|---|---|\n")
	w("| date | %s |\n| command | `%s` |\n| duration | %s |\n", rep.Date, rep.Command, rep.Elapsed)
	for _, k := range []string{"cpu", "cores", "memory", "os", "kernel", "load at start", "load at end"} {
		w("| %s | %s |\n", k, rep.Machine[k])
	}
	w("\n| software | version |\n|---|---|\n")
	for _, k := range sortedKeys(rep.Versions) {
		w("| %s | %s |\n", k, rep.Versions[k])
	}
	w("\n")
	renderPartial(&b, rep)
	w(methodText)
	w("\n## Targets\n\nThe performance targets of the design, checked against this run: in round trips of the ")
	w("1 ms one-way setting (2 ms each) unless they say otherwise. Ratios are zkcoord's median divided by the ")
	w("other's: below 1 is faster.\n\n")
	w("| target | measured | met? |\n|---|---|---|\n")
	for _, t := range checkTargets(rep) {
		w("| %s | %s | %s |\n", t.target, t.measured, t.verdict)
	}
	w("\n")
	renderRoundTrips(&b, rep, defs)

	section := ""
	for _, d := range defs {
		m := rep.metric(d.id)
		if m == nil || d.id == mMemory || isQueueMetric(d.base) {
			continue // in sections of their own
		}
		sec := sectionOf(d.base) + ", " + d.set.name()
		if sec != section {
			section = sec
			w("## %s\n\n", sec)
		}
		w("### %s\n\n%s\n\n", d.title, d.what)
		renderTable(&b, d, m)
		if c, ok := charts[d.id]; ok {
			w("\n![%s](%s)\n", d.title, c)
		}
		w("\n")
	}
	renderRebalanceScaling(&b, rep)
	renderQueues(&b, rep)
	renderMemory(&b, rep, charts[mMemory])
	if len(rep.Failures) > 0 {
		w("## Failures during the run\n\n")
		for _, id := range sortedKeys(rep.Failures) {
			for _, f := range rep.Failures[id] {
				w("- %s: %s\n", id, f)
			}
		}
		w("\n")
	}
	w("## Findings\n\n")
	b.WriteString(renderFindings(rep))
	return b.String()
}

// renderFindings renders bench/findings.md, a text/template whose
// functions read this run's numbers, so that the prose always quotes the
// tables above it:
//
//	{{p50 "lock" "zkcoord"}}          median, formatted
//	{{p10 ...}} {{p90 ...}}
//	{{ratio "lock" "zkcoord" "Curator"}}  p50 of the first ÷ p50 of the second
//	{{times "lock" "zkcoord" "Kazoo"}}    the second's p50 ÷ the first's: "× faster"
//	{{cross "lock" "zkcoord" "floor" "go-zookeeper"}}  p50 ÷ p50 across metrics
//	{{rate "distinct" "zkcoord"}}     requests per second (pairs/s × requests/pair)
//	{{extra "failover-10" "zkcoord" "woken_per_change"}}
//	{{req "lock" "zkcoord"}}          requests per operation
//	{{rtt "lock@1ms" "zkcoord"}}      p50 in round trips of the setting
//	{{xrtt "crash-leader-4s@1ms" "zkcoord election" "after_ms"}}  an extra, in round trips
//	{{writes ...}} {{notified ...}}
func renderFindings(rep *report) string {
	src, err := os.ReadFile("findings.md")
	if err != nil {
		return "(bench/findings.md is missing)\n"
	}
	get := func(metric, impl string) *summary {
		return rep.metric(metric).impl(impl)
	}
	val := func(f func(*summary) float64) func(string, string) string {
		return func(metric, impl string) string {
			s := get(metric, impl)
			if s == nil {
				return "(not measured)"
			}
			return num(f(s))
		}
	}
	funcs := template.FuncMap{
		"p10":      val(func(s *summary) float64 { return s.P10 }),
		"p50":      val(func(s *summary) float64 { return s.P50 }),
		"p90":      val(func(s *summary) float64 { return s.P90 }),
		"req":      val(func(s *summary) float64 { return s.PerOp.Packets }),
		"writes":   val(func(s *summary) float64 { return s.PerOp.Writes }),
		"notified": val(func(s *summary) float64 { return s.PerOp.Notified }),
		"extra": func(metric, impl, key string) string {
			s := get(metric, impl)
			if s == nil {
				return "(not measured)"
			}
			v, ok := s.Extra[key]
			if !ok {
				return "(not measured)"
			}
			return num(v)
		},
		"ratio": func(metric, a, b string) string {
			x, y := get(metric, a), get(metric, b)
			if x == nil || y == nil || y.P50 == 0 {
				return "(not measured)"
			}
			return fmt.Sprintf("%.2f", x.P50/y.P50)
		},
		"times": func(metric, a, b string) string {
			x, y := get(metric, a), get(metric, b)
			if x == nil || y == nil || x.P50 == 0 {
				return "(not measured)"
			}
			return fmt.Sprintf("%.1f", y.P50/x.P50)
		},
		"rate": func(metric, impl string) string {
			s := get(metric, impl)
			if s == nil {
				return "(not measured)"
			}
			return fmt.Sprintf("%.0f", s.Extra["ops_per_s"]*s.PerOp.Packets)
		},
		"rtt": func(metric, impl string) string {
			s := get(metric, impl)
			if s == nil || rttOf(metric) == 0 {
				return "(not measured)"
			}
			return fmt.Sprintf("%.1f", inRTT(metric, s.P50))
		},
		"xrtt": func(metric, impl, key string) string {
			s := get(metric, impl)
			if s == nil || rttOf(metric) == 0 {
				return "(not measured)"
			}
			v, ok := s.Extra[key]
			if !ok {
				return "(not measured)"
			}
			return fmt.Sprintf("%.1f", inRTT(metric, v))
		},
		"cross": func(m1, a, m2, b string) string {
			x, y := get(m1, a), get(m2, b)
			if x == nil || y == nil || y.P50 == 0 {
				return "(not measured)"
			}
			return fmt.Sprintf("%.2f", x.P50/y.P50)
		},
	}
	t, err := template.New("findings.md").Funcs(funcs).Parse(string(src))
	if err != nil {
		return fmt.Sprintf("(bench/findings.md: %v)\n", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, rep); err != nil {
		return fmt.Sprintf("(bench/findings.md: %v)\n", err)
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func sectionOf(id string) string {
	switch {
	case strings.HasPrefix(id, "crash"):
		return "Crash failover"
	case strings.HasPrefix(id, "failover"):
		return "Leader election"
	case strings.HasPrefix(id, "rebalance"):
		return "Rebalancing"
	case strings.HasPrefix(id, "cache"):
		return "Tree caches"
	default:
		return "Requests and locks"
	}
}

const methodText = `## Method

- **Loopback**: one standalone ZooKeeper server (zktest: loopback, tickTime 100 ms, fsync off, ` + "`-Xmx1g`" + `,
  serial GC, with the full JIT: bench/testdata/server-java drops zktest's C1-only flag and raises its 256 MB
  heap, which cannot hold the queue suites' 300,000 items) serves every
  implementation, with no delay: a request costs CPU, not a round trip.
- **Deployed-like**: a 3-server ensemble (zktest, same JVM settings, tickTime 100 ms) with fsync on
  (forceSync=yes: a write is acknowledged once a quorum has synced it to disk), every client connected through a
  proxy of its own (zktest's Proxy, written on the standard library) that delays each direction by 0.25 ms (one rack) or
  1 ms (zones apart). The Go clients get one proxy each; a Curator or Kazoo process shares one among its clients
  (the delay applies to each connection alike). The servers talk to each other on loopback, without delay.
- Every server is warmed up with some 50,000 requests (fewer in the delayed settings' wall time) before anything is
  measured. Every client asks for a 30 s session timeout, except in the crash suites.
- The Curator and Kazoo programs (bench/peers) run as long-lived processes (the JVM with its default settings)
  and time their operations themselves (System.nanoTime, time.perf_counter); the Go driver times zkcoord
  and go-zookeeper in-process, zkcoord's calls with a cancellable context as a service would pass.
  Setup (connecting, creating candidates and groups) is never timed.
- The crash suites run every participant as a process of its own (zkcoord: the test binary re-executed;
  Curator, Kazoo: their peer programs), kill one with SIGKILL and take the time from the kill to the other's
  action from the wall clock of both processes (one machine, one clock).
- Rounds are interleaved, each implementation running one round in turn (the first of each round rotates);
  one warm-up round per suite is discarded (none for memory and crashes). p10/p50/p90 are over all recorded samples.
- Requests per operation come from the servers' mntr counters, added up over the servers, read before and after
  each step (zk_packets_received: every request, pings included; zk_cnt_updatelatency: writes; the sums of the
  node_*_watch_count summaries: watch notifications). Idle sessions of the other implementations ping
  during a step, so these numbers are upper bounds, a little high for short steps.
`

// renderTable writes the table of one metric.
func renderTable(b *strings.Builder, d metricDef, m *metricResult) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	var zks, others []*summary
	for i := range m.Impls {
		s := &m.Impls[i]
		if isZkcoord(s.Impl) {
			zks = append(zks, s)
		} else {
			others = append(others, s)
		}
	}
	// With one zkcoord row, the ratio goes on the other rows; with several
	// (the rebalancing modes) and one other, on the zkcoord rows.
	ratioOnZk := len(zks) > 1 && len(others) == 1
	ratioHead := "zkcoord ÷ this (p50)"
	switch {
	case ratioOnZk:
		ratioHead = "this ÷ " + others[0].Impl + " (p50)"
	case len(others) == 0:
		ratioHead = "ratio (no peer here)"
	}
	w("| implementation | n | p10 | p50 | p90 (%s) | %s | requests/op | writes/op | notifications/op |", d.unit, ratioHead)
	for _, k := range d.extras {
		w(" %s |", extraNames[k])
	}
	w("\n|---|---|---|---|---|---|---|---|---|")
	for range d.extras {
		w("---|")
	}
	w("\n")
	for i := range m.Impls {
		s := &m.Impls[i]
		r := ""
		switch {
		case s.N == 0:
		case ratioOnZk && isZkcoord(s.Impl):
			r = ratio(s.P50, others[0].P50)
		case !ratioOnZk && !isZkcoord(s.Impl) && len(zks) == 1 && zks[0].N > 0:
			r = ratio(zks[0].P50, s.P50)
		}
		name := s.Impl
		if isZkcoord(name) {
			name = "**" + name + "**"
		}
		if s.N == 0 {
			w("| %s | 0 | – | – | – | | | | |", name)
		} else {
			w("| %s | %d | %s | %s | %s | %s | %s | %s | %s |", name, s.N, num(s.P10), num(s.P50), num(s.P90), r,
				num(s.PerOp.Packets), num(s.PerOp.Writes), num(s.PerOp.Notified))
		}
		for _, k := range d.extras {
			if v, ok := s.Extra[k]; ok {
				w(" %s |", num(v))
			} else {
				w(" |")
			}
		}
		w("\n")
	}
	for _, s := range m.Impls {
		for _, n := range s.Notes {
			w("\n%s: %s\n", s.Impl, n)
		}
	}
}

// renderRebalanceScaling shows how requests per change grow with the group.
func renderRebalanceScaling(b *strings.Builder, rep *report) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	var rows []string
	for _, sz := range rebalanceSizes(rep.Quick, &setting{}) {
		for _, id := range []string{joinMetric(sz), leaveMetric(sz)} {
			m := rep.metric(id)
			for _, mode := range rebalanceModes {
				s := m.impl(zkcoordName + " " + mode.String())
				if s == nil {
					continue
				}
				moved := s.Extra["paused"]
				n := float64(sz.clients)
				rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", id, mode, num(s.PerOp.Packets), num(moved),
					num(s.PerOp.Packets/(n+moved)), num(s.PerOp.Writes)))
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	w("## ZooKeeper requests per rebalancing, loopback\n\n")
	w("Requests per change against the clients (N) and the resources that moved: if the requests grow as ")
	w("O(N + moved), the last-but-one column stays flat as the group grows.\n\n")
	w("| change | mode | requests | resources moved | requests ÷ (N + moved) | writes |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		w("%s\n", r)
	}
	w("\n")
}

func renderMemory(b *strings.Builder, rep *report, chart string) {
	m := rep.metric(mMemory)
	if m == nil {
		return
	}
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Memory per client\n\n")
	w("Each implementation opens clients in a fresh process, each client with its own ZooKeeper session ")
	w("holding one lock, and reports the growth of its resident memory (VmRSS) divided by the clients; ")
	w("also the managed heap (Go: heap and stacks in use after a collection; Java: heap used after System.gc) ")
	w("and the goroutines or threads each client adds.\n\n")
	w("| implementation | clients | resident KiB per client | heap KiB per client | goroutines/threads per client |\n|---|---|---|---|---|\n")
	for _, s := range m.Impls {
		if s.N == 0 {
			continue
		}
		heap := "–"
		if v, ok := s.Extra["heap_kib_per_client"]; ok {
			heap = num(v)
		}
		th := s.Extra["threads_per_client"]
		if v, ok := s.Extra["goroutines_per_client"]; ok {
			th = v
		}
		w("| %s | %s | %s | %s | %s |\n", s.Impl, num(s.Extra["clients"]), num(s.P50), heap, num(th))
	}
	if chart != "" {
		w("\n![Memory per client](%s)\n", chart)
	}
	w("\n")
}
