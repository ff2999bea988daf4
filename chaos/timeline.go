package chaos

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
)

// WriteTimeline writes a self-contained HTML page (inline SVG, no script)
// showing, per resource, which client held it when (one color per
// client), the uses the service refused, the violations, and, per client
// and server, when it was paused, partitioned or down; every fault is a
// vertical line with a shaded band until it ended and a green tick when
// the group had converged again. Hovering over anything shows details.
func (r *Report) WriteTimeline(w io.Writer) error {
	bw := bufio.NewWriter(w)
	tl := newTimeline(r)
	tl.write(bw)
	return bw.Flush()
}

const (
	tlLeft   = 110 // label column
	tlTop    = 125 // fault labels
	tlRow    = 18
	tlGap    = 24 // between the resource and the process sections
	tlBottom = 40
)

type timeline struct {
	r         *Report
	pxPerSec  float64
	width     float64
	resources []string
	procs     []string // clients, then servers
	colors    map[string]string
}

func newTimeline(r *Report) *timeline {
	tl := &timeline{r: r, colors: map[string]string{}}
	secs := max(float64(r.End-r.Start)/1e9, 1)
	tl.pxPerSec = min(max(24000/secs, 8), 80)
	tl.width = tlLeft + secs*tl.pxPerSec + 40
	res := map[string]bool{}
	for _, iv := range r.Intervals {
		res[iv.Resource] = true
	}
	for _, x := range r.Final.Resources {
		res[x] = true
	}
	clients := map[string]bool{}
	for _, e := range r.Events {
		switch e.Kind {
		case event.Acquire, event.Pause, event.Crash, event.Exit:
			clients[e.Client] = true
		case event.Use, event.Reject:
			res[e.Resource] = true
		}
	}
	servers := map[string]bool{}
	for _, s := range r.Spans {
		if strings.HasPrefix(s.Target, "zk") {
			servers[s.Target] = true
		} else {
			clients[s.Target] = true
		}
	}
	tl.resources = sortedKeys(res)
	cl := sortedKeys(clients)
	for i, c := range cl {
		tl.colors[c] = fmt.Sprintf("hsl(%d,65%%,48%%)", (i*137+200)%360)
	}
	tl.procs = append(cl, sortedKeys(servers)...)
	return tl
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, compareNames)
	return out
}

func (tl *timeline) x(t int64) float64 {
	return tlLeft + float64(t-tl.r.Start)/1e9*tl.pxPerSec
}

func (tl *timeline) sec(t int64) string {
	return fmt.Sprintf("%.3fs", float64(t-tl.r.Start)/1e9)
}

func (tl *timeline) resY(i int) float64 { return tlTop + float64(i*tlRow) }
func (tl *timeline) procY(i int) float64 {
	return tlTop + float64(len(tl.resources)*tlRow+tlGap+i*tlRow)
}
func (tl *timeline) height() float64 {
	return tlTop + float64((len(tl.resources)+len(tl.procs))*tlRow+tlGap) + tlBottom
}

func esc(s string) string { return html.EscapeString(s) }

func (tl *timeline) write(w *bufio.Writer) {
	r := tl.r
	status := "pass"
	if !r.Pass {
		status = "fail"
	}
	fmt.Fprintf(w, `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>chaos %s seed %d</title>
<style>
body{font:13px sans-serif;margin:16px}
.pass{color:#0a0}.fail{color:#c00}
.chart{overflow-x:auto;border:1px solid #ccc}
table{border-collapse:collapse;margin-top:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
.legend span{display:inline-block;margin-right:12px}.sw{width:12px;height:12px;display:inline-block;vertical-align:middle;margin-right:4px}
svg text{font:11px sans-serif}
</style></head><body>
<h2 class="%s">%s</h2>
`, esc(string(r.Workload)), r.Seed, status, esc(r.Verdict))
	if r.Command != "" {
		fmt.Fprintf(w, "<p>Reproduce: <code>%s</code></p>\n", esc(r.Command))
	}
	fmt.Fprintf(w, "<p>%d clients at the start, %d resources, session timeout %v, self-expiry at %.2f of it; run time %v.</p>\n",
		r.Clients, r.Resources, r.SessionTimeout, r.LostAfter, r.Wall().Round(time.Second))
	w.WriteString(`<p class="legend">`)
	for _, c := range tl.procs {
		if col, ok := tl.colors[c]; ok {
			fmt.Fprintf(w, `<span><i class="sw" style="background:%s"></i>%s</span>`, col, esc(c))
		}
	}
	w.WriteString(`<span><i class="sw" style="background:#999"></i>paused</span>`)
	w.WriteString(`<span><i class="sw" style="background:#f90"></i>partitioned</span>`)
	w.WriteString(`<span><i class="sw" style="background:#333"></i>down</span>`)
	w.WriteString(`<span><i class="sw" style="background:#e00"></i>refused use / violation</span>`)
	w.WriteString(`<span><i class="sw" style="background:#0a0"></i>converged</span></p>` + "\n")

	fmt.Fprintf(w, `<div class="chart"><svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f">`+"\n", tl.width, tl.height())
	tl.axis(w)
	tl.faults(w)
	tl.rows(w)
	tl.holdings(w)
	tl.marks(w)
	tl.spans(w)
	w.WriteString("</svg></div>\n")
	tl.table(w)
	w.WriteString("</body></html>\n")
}

// axis draws the row labels and the time ticks.
func (tl *timeline) axis(w *bufio.Writer) {
	h := tl.height() - tlBottom
	secs := float64(tl.r.End-tl.r.Start) / 1e9
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300} {
		step = s
		if s*tl.pxPerSec >= 70 {
			break
		}
	}
	for s := 0.0; s <= secs; s += step {
		x := tlLeft + s*tl.pxPerSec
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="#eee"/>`, x, tlTop, x, h)
		fmt.Fprintf(w, `<text x="%.1f" y="%.0f" text-anchor="middle" fill="#666">%gs</text>`+"\n", x, h+14, s)
	}
}

// rows draws the labels and separators.
func (tl *timeline) rows(w *bufio.Writer) {
	for i, res := range tl.resources {
		y := tl.resY(i)
		fmt.Fprintf(w, `<text x="4" y="%.0f">%s</text><line x1="%d" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#f3f3f3"/>`+"\n",
			y+13, esc(res), tlLeft, y+tlRow, tl.width, y+tlRow)
	}
	for i, p := range tl.procs {
		y := tl.procY(i)
		fmt.Fprintf(w, `<text x="4" y="%.0f" fill="#444">%s</text><line x1="%d" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#f3f3f3"/>`+"\n",
			y+13, esc("process "+p), tlLeft, y+tlRow, tl.width, y+tlRow)
	}
}

// faults draws a line, a band and a label per fault.
func (tl *timeline) faults(w *bufio.Writer) {
	h := tl.height() - tlBottom
	for _, f := range tl.r.Faults {
		x0, x1 := tl.x(f.Start), tl.x(f.Healed)
		title := fmt.Sprintf("#%d %s: %s to %s", f.N, f.Detail, tl.sec(f.Start), tl.sec(f.Healed))
		if f.OK {
			title += fmt.Sprintf("; converged %v later", f.Converge.Round(time.Millisecond))
		} else {
			title += "; did not converge: " + f.Why
		}
		fmt.Fprintf(w, `<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%.0f" fill="#f00" opacity="0.07"/>`,
			esc(title), x0, tlTop, max(x1-x0, 1), h-tlTop)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="#d00" stroke-dasharray="4,3"/>`, x0, tlTop-4, x0, h)
		fmt.Fprintf(w, `<text transform="translate(%.1f,%d) rotate(-45)" fill="#a00">#%d %s</text></g>`+"\n",
			x0+3, tlTop-6, f.N, esc(shortKind(f)))
		if f.OK {
			xc := tl.x(f.Converged)
			fmt.Fprintf(w, `<g><title>#%d converged at %s</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="#0a0" stroke-width="2" opacity="0.6"/></g>`+"\n",
				f.N, tl.sec(f.Converged), xc, tlTop, xc, h)
		}
	}
}

func shortKind(f FaultRecord) string {
	d := f.Detail
	if i := strings.Index(d, " for "); i > 0 {
		d = d[:i]
	}
	if i := strings.Index(d, ", restart"); i > 0 {
		d = d[:i]
	}
	if len(d) > 30 {
		d = d[:30] + "…"
	}
	return d
}

// holdings draws one bar per holding. Holdings of one resource that
// overlap in time (double holdings, or a paused holder fenced off) go into
// separate lanes of the row, outlined in red.
func (tl *timeline) holdings(w *bufio.Writer) {
	row := map[string]int{}
	for i, res := range tl.resources {
		row[res] = i
	}
	type placed struct {
		iv   oracle.Interval
		end  int64
		lane int
	}
	byRes := map[string][]*placed{}
	lanes := map[string]int{}
	for _, iv := range tl.r.Intervals {
		end := iv.End
		if iv.Open {
			end = tl.r.End
		}
		p := &placed{iv: iv, end: end}
		var ends []int64 // per lane, the end of its last holding
		for _, q := range byRes[iv.Resource] {
			for len(ends) <= q.lane {
				ends = append(ends, 0)
			}
			ends[q.lane] = max(ends[q.lane], q.end)
		}
		for p.lane < len(ends) && ends[p.lane] > iv.Start {
			p.lane++
		}
		byRes[iv.Resource] = append(byRes[iv.Resource], p)
		lanes[iv.Resource] = max(lanes[iv.Resource], p.lane+1)
	}
	for _, res := range tl.resources {
		list := byRes[res]
		n := max(lanes[res], 1)
		hgt := float64(tlRow-6) / float64(n)
		for _, p := range list {
			iv := p.iv
			x0, x1 := tl.x(iv.Start), tl.x(p.end)
			y := tl.resY(row[res]) + 3 + float64(p.lane)*hgt
			ended := string(iv.EndedBy)
			if iv.Open {
				ended = "still held"
			}
			stroke := ""
			if p.lane > 0 {
				stroke = ` stroke="#e00" stroke-width="0.8"`
			}
			fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" opacity="0.85"%s><title>%s holds %s, token %d, %s to %s (%s)</title></rect>`+"\n",
				x0, y, max(x1-x0, 0.8), hgt, tl.colors[iv.Client], stroke, esc(iv.Client), esc(iv.Resource), iv.Token,
				tl.sec(iv.Start), tl.sec(p.end), esc(ended))
		}
	}
}

// marks draws refused uses and violations.
func (tl *timeline) marks(w *bufio.Writer) {
	row := map[string]int{}
	for i, res := range tl.resources {
		row[res] = i
	}
	for _, e := range tl.r.Events {
		if e.Kind != event.Reject {
			continue
		}
		x, y := tl.x(e.At), tl.resY(row[e.Resource])
		fmt.Fprintf(w, `<path d="M%.1f %.0f l-4 -6 h8 z" fill="#e00"><title>%s refused %s at %s: %s</title></path>`+"\n",
			x, y+tlRow-1, esc(e.Client), esc(e.Resource), tl.sec(e.At), esc(e.Detail))
	}
	for _, v := range tl.r.Violations {
		x := tl.x(v.At)
		y, hgt := float64(tlTop), float64(len(tl.resources)*tlRow)
		if i, ok := row[v.Resource]; ok {
			y, hgt = tl.resY(i), tlRow
		}
		fmt.Fprintf(w, `<rect x="%.1f" y="%.0f" width="12" height="%.0f" fill="none" stroke="#e00" stroke-width="3"><title>%s</title></rect>`+"\n",
			x-6, y, hgt, esc(v.String()))
	}
}

// spans draws what happened to each process.
func (tl *timeline) spans(w *bufio.Writer) {
	row := map[string]int{}
	for i, p := range tl.procs {
		row[p] = i
	}
	// Lifetimes of clients: from their first event to their crash or exit.
	alive := map[string]int64{}
	for _, e := range tl.r.Events {
		if _, ok := tl.colors[e.Client]; !ok {
			continue
		}
		switch e.Kind {
		case event.Crash, event.Exit:
			if from, ok := alive[e.Client]; ok {
				tl.bar(w, e.Client, row[e.Client], from, e.At, tl.colors[e.Client], 0.25, "running")
				delete(alive, e.Client)
			}
			x, y := tl.x(e.At), tl.procY(row[e.Client])
			fmt.Fprintf(w, `<text x="%.1f" y="%.0f" text-anchor="middle" font-weight="bold"><title>%s %s at %s (%s)</title>%s</text>`+"\n",
				x, y+13, esc(e.Client), e.Kind, tl.sec(e.At), esc(e.Detail), map[event.Kind]string{event.Crash: "✕", event.Exit: "⏏"}[e.Kind])
		default:
			if _, ok := alive[e.Client]; !ok {
				alive[e.Client] = e.At
			}
		}
	}
	for c, from := range alive {
		tl.bar(w, c, row[c], from, tl.r.End, tl.colors[c], 0.25, "running")
	}
	colors := map[string]string{"paused": "#999", "partitioned": "#f90", "down": "#333"}
	for _, s := range tl.r.Spans {
		tl.bar(w, s.Target, row[s.Target], s.From, s.To, colors[s.What], 0.9, fmt.Sprintf("%s (fault #%d)", s.What, s.Fault))
	}
}

func (tl *timeline) bar(w *bufio.Writer, who string, i int, from, to int64, color string, opacity float64, what string) {
	x0, x1 := tl.x(from), tl.x(to)
	fmt.Fprintf(w, `<rect x="%.1f" y="%.0f" width="%.1f" height="%d" fill="%s" opacity="%.2f"><title>%s %s %s to %s</title></rect>`+"\n",
		x0, tl.procY(i)+3, max(x1-x0, 1), tlRow-6, color, opacity, esc(who), esc(what), tl.sec(from), tl.sec(to))
}

// table lists the faults below the chart.
func (tl *timeline) table(w *bufio.Writer) {
	w.WriteString("<table><tr><th>#</th><th>fault</th><th>start</th><th>lasted</th><th>converged after its end</th></tr>\n")
	for _, f := range tl.r.Faults {
		conv := "<b class=fail>no: " + esc(f.Why) + "</b>"
		if f.OK {
			conv = f.Converge.Round(time.Millisecond).String()
		}
		fmt.Fprintf(w, "<tr><td>%d</td><td>%s</td><td>%s</td><td>%v</td><td>%s</td></tr>\n", f.N, esc(f.Detail),
			tl.sec(f.Start), time.Duration(f.Healed-f.Start).Round(time.Millisecond), conv)
	}
	w.WriteString("</table>\n")
	if len(tl.r.Violations) > 0 || len(tl.r.Problems) > 0 {
		w.WriteString("<h3 class=fail>Violations and problems</h3><ul>\n")
		for _, v := range tl.r.Violations {
			fmt.Fprintf(w, "<li>%s</li>\n", esc(v.String()))
		}
		for _, p := range tl.r.Problems {
			fmt.Fprintf(w, "<li><pre>%s</pre></li>\n", esc(p))
		}
		w.WriteString("</ul>\n")
	}
}
