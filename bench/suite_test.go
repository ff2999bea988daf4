//go:build bench

package bench

import (
	"context"
	"fmt"
	"log"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// An impl is one implementation taking part in a suite: zkcoord, a Go
// alternative, or a peer process. setup and teardown are not measured;
// round runs the measured steps of one round through rec.
type impl struct {
	name     string
	setup    func(ctx context.Context) error
	round    func(ctx context.Context, rec *recorder) error
	teardown func(ctx context.Context) error
	// rounds, if positive, caps the recorded rounds of this impl (for peers
	// too slow to run as often as the others within the time budget).
	rounds int
	note   string
}

// A suite runs its impls in interleaved rounds against the one server.
type suite struct {
	id     string
	rounds int // recorded rounds
	warm   int // rounds run first and discarded (0: one; negative: none)
	impls  []*impl
}

// stepOut is what one measured step produced.
type stepOut struct {
	values []float64 // samples, in the metric's unit
	ops    int       // operations the step performed (default len(values))
	extra  map[string]float64
}

// raw gathers the steps of one impl for one metric.
type raw struct {
	samples      []float64
	roundMedians []float64
	perOp        []counters
	extra        map[string][]float64
	notes        []string
}

// results collects raw measurements by metric and impl.
type results struct {
	mu   sync.Mutex
	data map[string]map[string]*raw
	errs map[string][]string // suite id -> failures
}

func newResults() *results {
	return &results{data: map[string]map[string]*raw{}, errs: map[string][]string{}}
}

func (r *results) get(metric, impl string) *raw {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.data[metric]
	if m == nil {
		m = map[string]*raw{}
		r.data[metric] = m
	}
	x := m[impl]
	if x == nil {
		x = &raw{extra: map[string][]float64{}}
		m[impl] = x
	}
	return x
}

// recorder measures the steps of one impl in one round.
type recorder struct {
	res     *results
	impl    *impl
	discard bool
}

// step runs f, charging it with the server counters it moved, and records
// its samples under metric (unless the round is a warm-up).
func (rec *recorder) step(ctx context.Context, metric string, f func() (stepOut, error)) error {
	before, err := readCounters(ctx)
	if err != nil {
		return err
	}
	out, err := f()
	if err != nil {
		return fmt.Errorf("%s: %w", metric, err)
	}
	after, err := readCounters(ctx)
	if err != nil {
		return err
	}
	if rec.discard {
		return nil
	}
	c := after.minus(before)
	c.Packets -= float64(server.Len()) // the second reading's mntr requests
	ops := out.ops
	if ops == 0 {
		ops = len(out.values)
	}
	x := rec.res.get(metric, rec.impl.name)
	rec.res.mu.Lock()
	defer rec.res.mu.Unlock()
	x.samples = append(x.samples, out.values...)
	if len(out.values) > 0 {
		x.roundMedians = append(x.roundMedians, median(out.values))
	}
	x.perOp = append(x.perOp, c.div(float64(ops)))
	for k, v := range out.extra {
		x.extra[k] = append(x.extra[k], v)
	}
	if n := rec.impl.note; n != "" && !slices.Contains(x.notes, n) {
		x.notes = append(x.notes, n)
	}
	return nil
}

// run runs the suite: setup of every impl, warm-up rounds, then recorded
// rounds with the impls interleaved (the first impl of a round rotates, so
// none always runs right after another), then teardown. An impl that fails
// is dropped from the rest of the suite and the failure is recorded.
func (s *suite) run(ctx context.Context, res *results) {
	start := time.Now()
	warm := s.warm
	switch {
	case warm == 0:
		warm = 1
	case warm < 0:
		warm = 0
	}
	live := map[*impl]bool{}
	fail := func(im *impl, what string, err error) {
		msg := fmt.Sprintf("%s: %s failed: %v", im.name, what, err)
		log.Printf("bench: %s: %s", s.id, msg)
		res.mu.Lock()
		res.errs[s.id] = append(res.errs[s.id], msg)
		res.mu.Unlock()
		delete(live, im)
	}
	ready := map[*impl]bool{}
	for _, im := range s.impls {
		live[im] = true
		if im.setup != nil {
			t := time.Now()
			if err := im.setup(ctx); err != nil {
				fail(im, "setup", err)
				continue
			}
			log.Printf("bench: %s: %s set up in %v", s.id, im.name, time.Since(t).Round(time.Millisecond))
		}
		ready[im] = true
	}
	done := map[*impl]int{}
	for r := 0; r < warm+s.rounds; r++ {
		n := len(s.impls)
		for k := 0; k < n; k++ {
			im := s.impls[(r+k)%n]
			if !live[im] {
				continue
			}
			recorded := r >= warm
			if recorded && im.rounds > 0 && done[im] >= im.rounds {
				continue
			}
			t := time.Now()
			rec := &recorder{res: res, impl: im, discard: !recorded}
			if err := im.round(ctx, rec); err != nil {
				fail(im, fmt.Sprintf("round %d", r), err)
				continue
			}
			if recorded {
				done[im]++
			}
			log.Printf("bench: %s: round %d %s %v", s.id, r, im.name, time.Since(t).Round(time.Millisecond))
		}
	}
	for _, im := range s.impls {
		// An impl whose setup failed may hold half-made state: it is left
		// for the end of the run, when the server goes.
		if im.teardown != nil && ready[im] {
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
			if err := im.teardown(tctx); err != nil {
				log.Printf("bench: %s: %s teardown: %v", s.id, im.name, err)
			}
			cancel()
		}
	}
	log.Printf("bench: %s done in %v", s.id, time.Since(start).Round(time.Millisecond))
}

// summary is the reported form of one impl's measurements of one metric.
type summary struct {
	Impl         string             `json:"impl"`
	N            int                `json:"n"`
	P10          float64            `json:"p10"`
	P50          float64            `json:"p50"`
	P90          float64            `json:"p90"`
	RoundMedians samples            `json:"round_medians"`
	PerOp        counters           `json:"per_op"`
	Extra        map[string]float64 `json:"extra,omitempty"`
	Notes        []string           `json:"notes,omitempty"`
	Samples      samples            `json:"samples"`
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// samples marshal on one line, rounded to four decimals (0.1 µs when the
// unit is ms), which keeps results.json readable and small.
type samples []float64

func (s samples) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, math.Round(v*1e4)/1e4, 'f', -1, 64)
	}
	return append(b, ']'), nil
}

func summarize(name string, x *raw) summary {
	s := summary{Impl: name, N: len(x.samples), RoundMedians: x.roundMedians, Samples: x.samples, Notes: x.notes}
	if len(x.samples) > 0 {
		s.P10, s.P50, s.P90 = round6(percentile(x.samples, 10)), round6(percentile(x.samples, 50)), round6(percentile(x.samples, 90))
	}
	if len(x.perOp) > 0 {
		var p, w, n []float64
		for _, c := range x.perOp {
			p, w, n = append(p, c.Packets), append(w, c.Writes), append(n, c.Notified)
		}
		s.PerOp = counters{Packets: round6(median(p)), Writes: round6(median(w)), Notified: round6(median(n))}
	}
	if len(x.extra) > 0 {
		s.Extra = map[string]float64{}
		for _, k := range slices.Sorted(maps.Keys(x.extra)) {
			s.Extra[k] = round6(median(x.extra[k]))
		}
	}
	return s
}
