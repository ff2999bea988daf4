package rebalance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// allocRead is one read of the allocation record.
type allocRead struct {
	gen           int64
	owners        map[string]string
	mtime         int64     // when the server wrote it, in ms
	before, after time.Time // around the read
}

// readAllocations reads the allocation in path after every change, closing
// ready after the first read, until a read satisfies done or ctx ends. It
// returns every read.
func readAllocations(ctx context.Context, sess *zkcoord.Session, path string, ready chan<- struct{}, done func(allocRead) bool) ([]allocRead, error) {
	var out []allocRead
	for {
		before := time.Now()
		data, st, w, err := sess.GetW(ctx, path)
		if err != nil {
			if ctx.Err() != nil {
				return out, nil
			}
			return out, err
		}
		rec, err := alloc.Decode(data)
		if err != nil {
			return out, err
		}
		r := allocRead{gen: rec.Generation, owners: rec.Assignment.Owners(), mtime: st.Mtime, before: before, after: time.Now()}
		out = append(out, r)
		if len(out) == 1 {
			close(ready)
		}
		if done(r) {
			return out, nil
		}
		select {
		case <-w:
		case <-ctx.Done():
			return out, nil
		}
	}
}

// TestMinIntervalCoalesces: two bursts of resource additions, the second
// right after the first rebalancing, cause fewer rebalancings than
// additions; the allocations are written at least the minimum interval
// apart (less a margin for the time a rebalancing takes to write), and the
// last one holds every resource.
func TestMinIntervalCoalesces(t *testing.T) {
	const (
		interval = 600 * time.Millisecond
		margin   = interval / 3 // from the start of a rebalancing to its write
	)
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(9)
	initial, burst := resources[:1], resources[1:]
	addResources(t, op, root, group, initial...)
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	a := start(t, connect(t), root, group, rec.handler("a"), rebalance.WithMinInterval(interval))
	testkit.WaitFor(t, 30*time.Second, "a runs "+initial[0], func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, initial)
	})

	_, resPath, _, _ := rebalance.PathsForTest(root, group)
	readCtx, stopReading := context.WithTimeout(ctx, 30*time.Second)
	defer stopReading()
	complete := func(r allocRead) bool { return len(r.owners) == len(resources) }
	type result struct {
		reads []allocRead
		err   error
	}
	results := make(chan result, 1)
	ready := make(chan struct{})
	go func() {
		reads, err := readAllocations(readCtx, op, resPath, ready, complete)
		results <- result{reads, err}
	}()
	select {
	case <-ready:
	case r := <-results:
		t.Fatalf("reading the allocation: %v", r.err)
	}
	d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
	if err != nil {
		t.Fatal(err)
	}
	addResources(t, op, root, group, burst[:4]...)
	testkit.WaitFor(t, 30*time.Second, "an allocation after the first burst", func() error {
		d2, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
		if err == nil && d2.Generation == d.Generation {
			err = fmt.Errorf("still generation %d", d.Generation)
		}
		return err
	})
	addResources(t, op, root, group, burst[4:]...)
	r := <-results // once an allocation holds every resource, or after 30s
	if r.err != nil {
		t.Fatalf("reading the allocation: %v", r.err)
	}
	reads := r.reads
	testkit.WaitFor(t, 30*time.Second, "a runs everything", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources)
	})

	first, last := reads[0], reads[len(reads)-1]
	n := int(last.gen - first.gen)
	t.Logf("%d additions, %d rebalancings", len(burst), n)
	if n < 1 || n >= len(burst) {
		t.Errorf("%d additions caused %d rebalancings, want between 1 and %d", len(burst), n, len(burst)-1)
	}
	for i := 1; i < len(reads); i++ {
		p, c := reads[i-1], reads[i]
		switch k := c.gen - p.gen; {
		case k < 0:
			t.Errorf("generation went back from %d to %d", p.gen, c.gen)
		case k == 1:
			if gap := time.Duration(c.mtime-p.mtime) * time.Millisecond; gap < interval-margin {
				t.Errorf("generations %d and %d written %v apart, want at least %v", p.gen, c.gen, gap, interval-margin)
			}
		case k > 1:
			// Several writes between two reads: they all fell within the
			// span of those reads.
			if span := c.after.Sub(p.before); span < time.Duration(k-1)*(interval-margin) {
				t.Errorf("%d allocations written within %v", k, span)
			}
		}
	}
	for _, res := range resources {
		if last.owners[res] != a.ID() {
			t.Errorf("last allocation (generation %d) gives %s to %q, want %s", last.gen, res, last.owners[res], a.ID())
		}
	}
	rec.check(t)
}

// TestStartDelay: with WithStartDelay(d), Assigned runs no earlier than d
// after the resource's barrier was created.
func TestStartDelay(t *testing.T) {
	const delay = 500 * time.Millisecond
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0")
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	type started struct {
		as rebalance.Assignment
		at time.Time
	}
	starts := make(chan started, 1)
	h := rec.handler("a")
	assigned := h.Assigned
	h.Assigned = func(ctx context.Context, as rebalance.Assignment) error {
		select {
		case starts <- started{as, time.Now()}:
		default:
		}
		return assigned(ctx, as)
	}
	start(t, connect(t), root, group, h, rebalance.WithStartDelay(delay))
	var s started
	select {
	case s = <-starts:
	case <-ctx.Done():
		t.Fatal("r0 was not started")
	}
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	_, st, err := op.Get(ctx, barriers+"/r0")
	if err != nil {
		t.Fatal(err)
	}
	if st.Czxid != s.as.Token {
		t.Fatalf("barrier czxid %d, token %d", st.Czxid, s.as.Token)
	}
	// The server stamps the creation in whole milliseconds of the same
	// wall clock.
	created := time.UnixMilli(st.Ctime)
	if waited := s.at.Sub(created); waited < delay {
		t.Fatalf("Assigned ran %v after the barrier was created, want at least %v", waited, delay)
	}
	rec.check(t)
}
