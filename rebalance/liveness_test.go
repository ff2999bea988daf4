package rebalance_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// logLines is a slog handler's output, safe for concurrent use.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) has(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !strings.Contains(l.b.String(), s) {
		return fmt.Errorf("no log line with %q", s)
	}
	return nil
}

// TestOversizedAllocationKeepsLast: an allocation that grows past the size
// limit is not written, and no coordinator aborts over it (each would fail
// the same way, until the whole group is down): the last allocation stays
// in force, the coordinator says so, and the next change is rebalanced.
func TestOversizedAllocationKeepsLast(t *testing.T) {
	for _, mode := range []rebalance.Mode{rebalance.Incremental, rebalance.GlobalBarrier} {
		t.Run(mode.String(), func(t *testing.T) {
			root, group := newRoot(t), "g"
			op := connect(t)
			ctx := testCtx(t, 90*time.Second)
			resources := resourceIDs(4)
			addResources(t, op, root, group, resources...)
			rec := newRecorder()
			logs := &logLines{}
			log := slog.New(slog.NewTextHandler(logs, nil))
			opts := []rebalance.Option{rebalance.WithMode(mode), rebalance.WithLogger(log)}
			a := start(t, connect(t), root, group, rec.handler("a"), opts...)
			b := start(t, connect(t), root, group, rec.handler("b"), opts...)
			clients := []*rebalance.Client{a, b}
			testkit.WaitFor(t, 30*time.Second, "balanced", func() error { return balanced(ctx, op, root, group, clients, resources) })

			_, resPath, _, _ := rebalance.PathsForTest(root, group)
			before, _, err := op.Get(ctx, resPath)
			if err != nil {
				t.Fatal(err)
			}
			// A resource whose name does not compress outgrows the limit.
			rebalance.SetMaxAllocationForTest(t, len(before)+64)
			noise := make([]byte, 1000)
			if _, err := rand.Read(noise); err != nil {
				t.Fatal(err)
			}
			big := hex.EncodeToString(noise)
			addResources(t, op, root, group, big)
			testkit.WaitFor(t, 30*time.Second, "the coordinator reports the oversized allocation", func() error {
				return logs.has("too large")
			})
			for _, c := range clients {
				if c.State() == rebalance.Aborted || c.Err() != nil {
					t.Fatalf("client %s: state %v, err %v", c.ID(), c.State(), c.Err())
				}
			}
			after, _, err := op.Get(ctx, resPath)
			if err != nil || string(after) != string(before) {
				t.Fatalf("allocation changed (%v)", err)
			}
			// Nobody was asked to stop for an allocation that cannot be
			// written.
			d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != nil && d.Status.Phase == rebalance.PhaseStopActivity {
				t.Fatalf("the group was stopped for an allocation that cannot be written: %+v", d.Status)
			}
			// The next change is rebalanced.
			if err := rebalance.RemoveResource(ctx, op, zkcoord.Join(root, group), big); err != nil {
				t.Fatal(err)
			}
			more := append(resources, "r100")
			addResources(t, op, root, group, "r100")
			testkit.WaitFor(t, 30*time.Second, "the next change rebalanced", func() error { return balanced(ctx, op, root, group, clients, more) })
			rec.check(t)
		})
	}
}

// TestHandlerReturningContextErrorIsAStop: an Assigned handler that waits
// for its context and then returns the context's error (the Go idiom) has
// stopped normally when its resource is taken away: Unassigned follows and
// the client carries on, instead of aborting over a handler failure.
func TestHandlerReturningContextErrorIsAStop(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	ctx := testCtx(t, 60*time.Second)
	addResources(t, op, root, group, "slow")
	rec := newRecorder()
	h := rec.handler("a")
	inner := h.Assigned
	h.Assigned = func(ctx context.Context, as rebalance.Assignment) error {
		if err := inner(ctx, as); err != nil || as.Resource != "slow" {
			return err
		}
		<-ctx.Done() // a start-up that only ends when asked to
		return ctx.Err()
	}
	var (
		mu      sync.Mutex
		aborted error
	)
	h.Aborted = func(err error) {
		mu.Lock()
		aborted = err
		mu.Unlock()
	}
	a := start(t, connect(t), root, group, h)
	testkit.WaitFor(t, 30*time.Second, "a runs slow", func() error {
		if rec.holders()["slow"] != "a" {
			return fmt.Errorf("holders %v", rec.holders())
		}
		return nil
	})
	if err := rebalance.RemoveResource(ctx, op, zkcoord.Join(root, group), "slow"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "slow stopped", func() error {
		if err := a.Err(); err != nil {
			t.Fatalf("a ended when its resource was taken away: %v", err)
		}
		if n := rec.stopCounts()["slow"]; n != 1 {
			return fmt.Errorf("Unassigned called %d times", n)
		}
		return nil
	})
	addResources(t, op, root, group, "next")
	testkit.WaitFor(t, 30*time.Second, "a runs the next resource", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"next"})
	})
	mu.Lock()
	defer mu.Unlock()
	if aborted != nil || a.Err() != nil || a.State() == rebalance.Aborted {
		t.Fatalf("a aborted: %v, %v", aborted, a.Err())
	}
	rec.check(t)
}
