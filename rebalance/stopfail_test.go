package rebalance_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// failingStop is a handler whose Unassigned fails (returns an error, or
// panics) for the first resource taken away from it by a move, until the
// test confirms that resource stopped. The recorder still counts a
// resource whose stop failed as running, so a second owner starting it
// is a violation.
type failingStop struct {
	rec    *recorder
	panics bool

	mu        sync.Mutex
	target    string // the resource whose stop fails
	failed    int    // failed calls of Unassigned for it
	reported  int    // calls of StopFailed for it
	lastErr   error  // as reported to StopFailed
	confirmed bool   // Unassigned succeeds from now on
}

func (f *failingStop) handler(name string) rebalance.Handler {
	h := f.rec.handler(name)
	stop := h.Unassigned
	h.Unassigned = func(a rebalance.Assignment, cause error) error {
		f.mu.Lock()
		if f.target == "" && errors.Is(cause, rebalance.ErrMoved) {
			f.target = a.Resource
		}
		fail := a.Resource == f.target && !f.confirmed
		if fail {
			f.failed++
		}
		f.mu.Unlock()
		if !fail {
			return stop(a, cause)
		}
		if f.panics {
			panic("cannot stop " + a.Resource)
		}
		return fmt.Errorf("cannot stop %s", a.Resource)
	}
	h.StopFailed = func(a rebalance.Assignment, failures int, err error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if a.Resource == f.target {
			f.reported, f.lastErr = failures, err
		}
	}
	return h
}

// state returns the failing resource and its failed calls so far.
func (f *failingStop) state() (string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.target, f.failed
}

func (f *failingStop) confirm() {
	f.mu.Lock()
	f.confirmed = true
	f.mu.Unlock()
}

// A resource whose Unassigned fails (with an error, or a panic) may still
// be in use: it stays fenced — its barrier and the client's Session are
// kept, Unassigned is called again and each failure reported — until a
// call succeeds, so its next owner never starts it meanwhile, while every
// other resource moves as usual; a Stop waits for that confirmation too.
// For Start and StartConfig alike.
func TestFailedStopKeepsResourceFenced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config bool // StartConfig (the client's own Sessions) rather than Start
		panics bool
	}{
		{"Start/error", false, false},
		{"Start/panic", false, true},
		{"StartConfig/error", true, false},
		{"StartConfig/panic", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) { testFailedStop(t, tc.config, tc.panics) })
	}
}

func testFailedStop(t *testing.T, useConfig, panics bool) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(4)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	f := &failingStop{rec: rec, panics: panics}
	ctx := testCtx(t, 90*time.Second)
	t.Cleanup(f.confirm) // before the clients are stopped

	var a *rebalance.Client
	if useConfig {
		var err error
		a, err = rebalance.StartConfig(ctx, config(cluster.Servers()), zkcoord.Join(root, group), f.handler("a"),
			rebalance.WithMinInterval(50*time.Millisecond),
			rebalance.WithAutoRecovery(true), rebalance.WithMaxRecoveryBackoff(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			a.Stop(sctx)
		})
	} else {
		a = start(t, connect(t), root, group, f.handler("a"), rebalance.WithMaxRecoveryBackoff(500*time.Millisecond))
	}
	testkit.WaitFor(t, 30*time.Second, "a runs everything", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources)
	})
	tokens := map[string]int64{}
	for _, as := range a.Assignments() {
		tokens[as.Resource] = as.Token
	}
	b := start(t, connect(t), root, group, rec.handler("b"))
	_, _, barriers, _ := rebalance.PathsForTest(root, group)

	// fenced checks that the failing resource is still a's: its barrier
	// is the one a created (a's Session lives), the allocation has moved
	// it to b, and b has not started it.
	var target string
	var token int64
	fenced := func() error {
		select {
		case <-a.Done():
			t.Fatalf("a ended (%v) while its stop of %s had not succeeded", a.Err(), target)
		default:
		}
		if slices.ContainsFunc(b.Assignments(), func(as rebalance.Assignment) bool { return as.Resource == target }) {
			t.Fatalf("b started %s while a's stop had not succeeded", target)
		}
		ok, st, err := op.Exists(ctx, barriers+"/"+target)
		if err != nil {
			return err
		}
		if !ok || st.Czxid != token {
			t.Fatalf("the barrier of %s went while a's stop had not succeeded", target)
		}
		d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
		if err != nil {
			return err
		}
		if len(d.Pending) != 1 || d.Pending[0].Resource != target || d.Pending[0].To != b.ID() {
			return fmt.Errorf("pending %+v", d.Pending)
		}
		return nil
	}

	// b joins: two resources move. One of them does not stop; the other
	// moves normally, and a keeps running its other two.
	var kept []string
	testkit.WaitFor(t, 30*time.Second, "a's first failed stop", func() error {
		if target, _ = f.state(); target == "" {
			return testkit.ErrNotYet
		}
		return nil
	})
	token = tokens[target]
	testkit.WaitFor(t, 30*time.Second, "the other resources shared, "+target+" fenced and its stop retried", func() error {
		if err := fenced(); err != nil {
			return err
		}
		if _, n := f.state(); n < 3 {
			return fmt.Errorf("%d failed calls of Unassigned", n)
		}
		held, moved := a.Assignments(), b.Assignments()
		if len(held) != 2 || len(moved) != 1 {
			return fmt.Errorf("a runs %v, b runs %v", held, moved)
		}
		kept = []string{held[0].Resource, held[1].Resource}
		return nil
	})
	if n := rec.stopCounts(); n[kept[0]] != 0 || n[kept[1]] != 0 {
		t.Fatalf("a stopped resources it keeps: %v", n)
	}
	f.mu.Lock()
	reported, lastErr := f.reported, f.lastErr
	f.mu.Unlock()
	if reported < 2 || !errors.Is(lastErr, rebalance.ErrHandler) {
		t.Fatalf("StopFailed reported %d failures, last %v; want several, wrapping ErrHandler", reported, lastErr)
	}

	// a leaves: everything else moves to b, and a's Stop waits for the
	// confirmation, keeping the failing resource fenced.
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(ctx) }()
	_, before := f.state()
	testkit.WaitFor(t, 30*time.Second, "b runs everything but "+target, func() error {
		if err := fenced(); err != nil {
			return err
		}
		if _, n := f.state(); n < before+2 {
			return fmt.Errorf("%d failed calls of Unassigned since Stop", n-before)
		}
		if n := len(b.Assignments()); n != len(resources)-1 {
			return fmt.Errorf("b runs %d", n)
		}
		return nil
	})
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) before the stop of %s succeeded", err, target)
	default:
	}

	f.confirm()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("stop: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("a did not stop once its Unassigned succeeded")
	}
	if a.Err() != nil || a.State() != rebalance.Stopped {
		t.Fatalf("a ended with %v in state %v, want Stopped", a.Err(), a.State())
	}
	testkit.WaitFor(t, 30*time.Second, "b runs everything", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{b}, resources)
	})
	rec.check(t)
}
