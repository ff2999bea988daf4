//go:build bench

package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A partialRun is a run of some suites (-bench.only) merged into the
// results of an earlier full run with -bench.merge: its metrics replace
// those of the same id and add the new ones.
type partialRun struct {
	Date    string   `json:"date"`
	Command string   `json:"command"`
	Elapsed string   `json:"elapsed"`
	Load    string   `json:"load"`
	Metrics []string `json:"metrics"`
}

// mergeInto merges the metrics of run into the results already in outDir,
// keeping the earlier run as the report's own and listing run as a partial
// run. Without earlier results, run is returned as it is.
func mergeInto(outDir string, run *report, defs []metricDef) (*report, error) {
	b, err := os.ReadFile(filepath.Join(outDir, "bench", "results.json"))
	if os.IsNotExist(err) {
		return run, nil
	}
	if err != nil {
		return nil, err
	}
	var old report
	if err := json.Unmarshal(b, &old); err != nil {
		return nil, fmt.Errorf("earlier results: %w", err)
	}
	if old.Quick != run.Quick {
		return nil, fmt.Errorf("cannot merge a quick run with a full one")
	}
	byID := map[string]metricResult{}
	for _, m := range old.Metrics {
		byID[m.ID] = m
	}
	p := partialRun{Date: run.Date, Command: run.Command, Elapsed: run.Elapsed,
		Load: run.Machine["load at start"] + " at start, " + run.Machine["load at end"] + " at end"}
	for _, m := range run.Metrics {
		byID[m.ID] = m
		p.Metrics = append(p.Metrics, m.ID)
	}
	// Metrics in the order of the definitions; unknown ones (no longer
	// defined) are dropped, as a full run would drop them.
	old.Metrics = nil
	for _, d := range defs {
		if m, ok := byID[d.id]; ok {
			old.Metrics = append(old.Metrics, m)
		}
	}
	// An earlier partial run whose every metric is measured again is gone.
	var kept []partialRun
	for _, q := range old.Partial {
		q.Metrics = slices.DeleteFunc(q.Metrics, func(id string) bool { return slices.Contains(p.Metrics, id) })
		if len(q.Metrics) > 0 {
			kept = append(kept, q)
		}
	}
	old.Partial = append(kept, p)
	for id, fs := range run.Failures {
		if old.Failures == nil {
			old.Failures = map[string][]string{}
		}
		old.Failures[id] = fs
	}
	return &old, nil
}

// renderPartial lists the partial runs merged into a report.
func renderPartial(b *strings.Builder, rep *report) {
	if len(rep.Partial) == 0 {
		return
	}
	fmt.Fprintf(b, "Some tables come from later runs of a part of the suites, merged into this run's results "+
		"(`-bench.merge`), on the same machine:\n\n| date | command | duration | load | metrics |\n|---|---|---|---|---|\n")
	for _, p := range rep.Partial {
		fmt.Fprintf(b, "| %s | `%s` | %s | %s | %s |\n", p.Date, p.Command, p.Elapsed, p.Load, strings.Join(p.Metrics, ", "))
	}
	b.WriteString("\n")
}
