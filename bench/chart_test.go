//go:build bench

package bench

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Colours: zkcoord in blue, everything else in grey tones.
var (
	colorZkcoord = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorOther   = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff}
)

// barChart draws one horizontal bar per implementation: the median, with
// a whisker from the 10th to the 90th percentile and the median written
// after it. Implementations listed first are drawn at the top.
func barChart(file, title, unit string, rows []summary, isZkcoord func(string) bool) error {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = unit + " (bar: median; whisker: 10th to 90th percentile)"
	p.X.Min = 0

	n := len(rows)
	names := make([]string, n)
	var zk, other plotter.Values
	errs := make(plotter.XErrors, n)
	xys := make(plotter.XYs, n)
	lxys := make(plotter.XYs, n) // where the labels go: right of the whisker
	labels := make([]string, n)
	maxX := 0.0
	for i, r := range rows {
		y := n - 1 - i           // first row on top
		names[y] = "  " + r.Impl // the leading spaces keep the name off the edge
		v := r.P50
		if isZkcoord(r.Impl) {
			zk, other = append(zk, v), append(other, 0)
		} else {
			zk, other = append(zk, 0), append(other, v)
		}
		xys[i] = plotter.XY{X: v, Y: float64(y)}
		lxys[i] = plotter.XY{X: max(v, r.P90), Y: float64(y)}
		errs[i] = struct{ Low, High float64 }{v - r.P10, r.P90 - v}
		labels[i] = "  " + short(v)
		maxX = max(maxX, r.P90, v)
	}
	// Values are indexed by y, so reverse them.
	rev := func(v plotter.Values) plotter.Values {
		out := make(plotter.Values, len(v))
		for i := range v {
			out[len(v)-1-i] = v[i]
		}
		return out
	}
	for _, part := range []struct {
		v plotter.Values
		c color.Color
	}{{rev(zk), colorZkcoord}, {rev(other), colorOther}} {
		b, err := plotter.NewBarChart(part.v, vg.Points(14))
		if err != nil {
			return err
		}
		b.Horizontal = true
		b.Color = part.c
		b.LineStyle.Width = 0
		p.Add(b)
	}
	eb, err := plotter.NewXErrorBars(struct {
		plotter.XYs
		plotter.XErrors
	}{xys, errs})
	if err != nil {
		return err
	}
	eb.LineStyle.Width = vg.Points(1)
	p.Add(eb)
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: lxys, Labels: labels})
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].YAlign = -0.5
	}
	p.Add(lb)
	p.NominalY(names...)
	p.X.Max = maxX * 1.25
	h := vg.Length(60+28*n) * vg.Points(1)
	return p.Save(7*vg.Inch, h, file)
}

// short formats a number with three significant digits.
func short(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
