package rebalance_test

import (
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

// A failed socket write while the owner sets its barrier watch again is a
// connection loss, not the end of watching: a later deletion of the
// barrier by someone else still stops the resource.
func TestBarrierWatchAcrossRawWriteError(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0")
	var f testkit.WriteFault
	cfg := config(cluster.Servers())
	cfg.Dialer = f.Dial
	sess, err := zkcoord.Connect(testCtx(t, 30*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(testCtx(t, 10*time.Second)) })
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	start(t, sess, root, group, rec.handler("a"))
	testkit.WaitFor(t, 30*time.Second, "r0 running", func() error {
		if rec.holders()["r0"] != "a" {
			return testkit.ErrNotYet
		}
		return nil
	})
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	barrier := barriers + "/r0"
	hit := f.FailNext(testkit.OpExists, barrier)
	data, _, err := op.Get(ctx, barrier)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Set(ctx, barrier, data, -1); err != nil { // fires the owner's watch
		t.Fatal(err)
	}
	select {
	case <-hit:
	case <-ctx.Done():
		t.Fatal("the owner never watched its barrier again")
	}
	// The watch is set again on the same Session, and nothing stopped.
	testkit.WaitFor(t, 30*time.Second, "the barrier watched again", func() error {
		w, err := cluster.Server(0).Wchc(ctx)
		if err != nil {
			return err
		}
		if !slices.Contains(w[sess.ID()], barrier) {
			return testkit.ErrNotYet
		}
		return nil
	})
	if n := rec.stopCounts()["r0"]; n != 0 {
		t.Fatalf("r0 stopped %d times across a connection loss", n)
	}
	if err := op.Delete(ctx, barrier, -1); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "r0 stopped for its lost barrier", func() error {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !slices.ContainsFunc(rec.causes, func(err error) bool { return errors.Is(err, rebalance.ErrBarrierLost) }) {
			return testkit.ErrNotYet
		}
		return nil
	})
	rec.check(t)
}

// An error of an unexpected kind while the owner watches its barrier
// means the ownership can no longer be vouched for: the owner stops the
// resource and then deletes its barrier (it is still its own), so that
// the resource is taken over again, with a new token, by this client or,
// if it has moved meanwhile, by the next owner, which is not left waiting
// for the end of the first owner's Session.
func TestUnwatchableBarrierIsReleased(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0")
	ctx := testCtx(t, 60*time.Second)
	rec := newRecorder()
	injected := errors.New("injected: an answer the watcher cannot interpret")

	var (
		mu      sync.Mutex
		hold    bool                  // hold up the next stop for a lost barrier
		entered = make(chan struct{}) // closed when it is held up
		release = make(chan struct{}) // lets it return
		causes  []error               // of the stops for a lost barrier
	)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the clients are stopped
	h := rec.handler("a")
	unassigned := h.Unassigned
	h.Unassigned = func(as rebalance.Assignment, cause error) error {
		if errors.Is(cause, rebalance.ErrBarrierLost) {
			mu.Lock()
			causes = append(causes, cause)
			held := hold
			hold = false
			mu.Unlock()
			if held {
				close(entered)
				<-release
			}
		}
		return unassigned(as, cause)
	}
	var fault rebalance.BarrierWatchFault
	sessA := connect(t)
	a := start(t, sessA, root, group, h, fault.Option())
	testkit.WaitFor(t, 30*time.Second, "a runs r0", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0"})
	})
	old := a.Assignments()[0]

	// The watcher's re-read fails: a stops r0, deletes its barrier and
	// takes r0 over again through a new one.
	fire := func() {
		t.Helper()
		data, _, err := op.Get(ctx, old.Barrier)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := op.Set(ctx, old.Barrier, data, -1); err != nil { // fires the owner's watch
			t.Fatal(err)
		}
	}
	hit := fault.FailNext("r0", injected)
	fire()
	select {
	case <-hit:
	case <-ctx.Done():
		t.Fatal("the owner never read its barrier again")
	}
	testkit.WaitFor(t, 30*time.Second, "a runs r0 again", func() error {
		rec.mu.Lock()
		n := rec.starts["r0"]
		rec.mu.Unlock()
		if as := a.Assignments(); n != 2 || len(as) != 1 {
			return fmt.Errorf("r0 started %d times; a runs %+v", n, as)
		}
		return nil
	})
	renewed := a.Assignments()[0]
	if renewed.Token <= old.Token {
		t.Fatalf("r0 runs again with token %d, want more than %d", renewed.Token, old.Token)
	}
	mu.Lock()
	if len(causes) != 1 || !errors.Is(causes[0], injected) {
		t.Fatalf("stops for a lost barrier: %v, want one caused by %v", causes, injected)
	}
	mu.Unlock()

	// Again, now held up in Unassigned while a leaves and r0 moves to b:
	// once the stop returns, a deletes its barrier and b starts r0 while
	// a's Session still lives.
	b := start(t, connect(t), root, group, rec.handler("b"))
	testkit.WaitFor(t, 30*time.Second, "a keeps r0 with b in the group", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, []string{"r0"})
	})
	mu.Lock()
	hold = true
	mu.Unlock()
	old = renewed
	hit = fault.FailNext("r0", injected)
	fire()
	select {
	case <-hit:
	case <-ctx.Done():
		t.Fatal("the owner never read its barrier again")
	}
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("r0 was not stopped")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(ctx) }()
	testkit.WaitFor(t, 30*time.Second, "r0 allocated to b, barrier still a's", func() error {
		d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
		if err != nil {
			return err
		}
		if len(d.Pending) != 1 || d.Pending[0].From != old.Client || d.Pending[0].To != b.ID() {
			return fmt.Errorf("pending %+v", d.Pending)
		}
		return nil
	})
	unblock()
	testkit.WaitFor(t, 30*time.Second, "b runs r0", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{b}, []string{"r0"})
	})
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if sessA.Err() != nil {
		t.Fatalf("a's Session ended: %v", sessA.Err())
	}
	rec.check(t)
}
