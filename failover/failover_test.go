package failover_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/failover"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

const long = 60 * time.Second

var errBoom = errors.New("boom")

// world is the shared resource the instances take turns on. It detects
// two actives at once, and its fencing function stops a previous active
// the way STONITH would: it kills it and waits until it has stopped.
type world struct {
	mu          sync.Mutex
	inside      string // id of the instance inside its active function
	overlaps    []string
	kill        map[string]chan struct{} // closed by fencing
	fail        map[string]chan struct{} // closed to make active return errBoom
	left        map[string]chan struct{} // closed when active returned
	activations []activation
	fenceCalls  []failover.Breadcrumb
	fenceErrs   int // fail this many fencing calls first
	// stoppedAtFence records, for each fencing call, whether the fenced
	// instance had already left its active function on its own.
	stoppedAtFence []bool
}

type activation struct {
	id  string
	a   failover.Activation
	seq int // fenceCalls seen at activation
}

func newWorld() *world {
	return &world{kill: map[string]chan struct{}{}, fail: map[string]chan struct{}{}, left: map[string]chan struct{}{}}
}

// active returns the active function of instance id.
func (w *world) active(id string) failover.ActiveFunc {
	return func(ctx context.Context, a failover.Activation) error {
		w.mu.Lock()
		if w.inside != "" {
			w.overlaps = append(w.overlaps, w.inside+" and "+id)
		}
		w.inside = id
		kill, fail, left := make(chan struct{}), make(chan struct{}), make(chan struct{})
		w.kill[id], w.fail[id], w.left[id] = kill, fail, left
		w.activations = append(w.activations, activation{id: id, a: a, seq: len(w.fenceCalls)})
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			if w.inside == id {
				w.inside = ""
			}
			w.mu.Unlock()
			close(left)
		}()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-kill:
			return errors.New("killed by fencing")
		case <-fail:
			return errBoom
		}
	}
}

func (w *world) fence(ctx context.Context, prev failover.Breadcrumb) error {
	w.mu.Lock()
	w.fenceCalls = append(w.fenceCalls, prev)
	stopped := w.left[prev.ID] != nil
	if stopped {
		select {
		case <-w.left[prev.ID]:
		default:
			stopped = false
		}
	}
	w.stoppedAtFence = append(w.stoppedAtFence, stopped)
	if w.fenceErrs > 0 {
		w.fenceErrs--
		w.mu.Unlock()
		return errors.New("fencing failed")
	}
	kill, left := w.kill[prev.ID], w.left[prev.ID]
	w.mu.Unlock()
	if kill == nil {
		return nil // never ran here, or a foreign breadcrumb
	}
	select {
	case <-kill:
	default:
		close(kill)
	}
	select {
	case <-left:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *world) current() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inside
}

func (w *world) lastActivation() activation {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.activations) == 0 {
		return activation{}
	}
	return w.activations[len(w.activations)-1]
}

func (w *world) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.activations)
}

func (w *world) checkNoOverlap(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.overlaps) > 0 {
		t.Fatalf("two actives at once: %v", w.overlaps)
	}
}

// instance is one running Failover.
type instance struct {
	id     string
	sess   *zkcoord.Session
	f      *failover.Failover
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, w *world, sess *zkcoord.Session, path, id string, opts ...failover.Option) *instance {
	t.Helper()
	opts = append([]failover.Option{failover.WithID(id), failover.WithData([]byte("pid-of-" + id)),
		failover.WithRetryDelay(50 * time.Millisecond)}, opts...)
	f, err := failover.New(sess, path, w.fence, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{id: id, sess: sess, f: f, cancel: cancel, done: make(chan error, 1)}
	go func() { in.done <- f.Run(ctx, w.active(id)) }()
	t.Cleanup(func() {
		cancel()
		<-in.done
	})
	return in
}

func (in *instance) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-in.done:
		in.done <- err
		return err
	case <-time.After(long):
		t.Fatalf("%s: Run did not return", in.id)
	}
	return nil
}

func TestCleanStopLeavesNothingToFence(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	w := newWorld()
	a := start(t, w, connect(t, shared.Servers()), path, "a")
	testkit.Eventually(t, long, "a active", func() bool { return w.current() == "a" })
	crumb, err := a.f.Breadcrumb(ctx)
	if err != nil || crumb == nil || crumb.ID != "a" || string(crumb.Data) != "pid-of-a" {
		t.Fatalf("breadcrumb %+v, %v", crumb, err)
	}
	b := start(t, w, connect(t, shared.Servers()), path, "b")
	a.cancel()
	if err := a.wait(t); err != nil {
		t.Fatalf("a: Run = %v after a clean stop", err)
	}
	testkit.Eventually(t, long, "b active", func() bool { return w.current() == "b" })
	last := w.lastActivation()
	if last.a.Previous != nil || last.a.Fenced || len(w.fenceCalls) != 0 {
		t.Fatalf("b after a clean stop: previous %+v fenced %v, %d fence calls", last.a.Previous, last.a.Fenced, len(w.fenceCalls))
	}
	if last.a.Token <= w.activations[0].a.Token {
		t.Fatalf("tokens %d then %d", w.activations[0].a.Token, last.a.Token)
	}
	b.cancel()
	if err := b.wait(t); err != nil {
		t.Fatal(err)
	}
	if crumb, err := b.f.Breadcrumb(ctx); err != nil || crumb != nil {
		t.Fatalf("breadcrumb after clean stops: %+v, %v", crumb, err)
	}
	w.checkNoOverlap(t)
}

// TestUncleanExitIsFenced: the active instance is cut off and its session
// expired on the server, while it still runs (it has not yet declared its
// Session lost). The standby must fence it before becoming active; the
// fencing here kills it, so the two never overlap. Without fencing they
// would.
func TestUncleanExitIsFenced(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	w := newWorld()
	proxy := shared.NewProxy(t)
	sa := connect(t, proxy.Servers())
	a := start(t, w, sa, path, "a")
	testkit.Eventually(t, long, "a active", func() bool { return w.current() == "a" })
	b := start(t, w, connect(t, shared.Servers()), path, "b")
	testkit.Eventually(t, long, "b standing by", func() bool {
		c, err := b.f.Election().Leader(ctx)
		return err == nil && c.ID == "a"
	})
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := shared.ExpireSession(ctx, sa.ID(), sa.Password()); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, long, "b active", func() bool { return w.lastActivation().id == "b" })
	last := w.lastActivation()
	p := last.a.Previous
	if p == nil || p.ID != "a" || string(p.Data) != "pid-of-a" || p.Token != w.activations[0].a.Token || !last.a.Fenced {
		t.Fatalf("b's activation: previous %+v, fenced %v", p, last.a.Fenced)
	}
	if last.seq != 1 || w.fenceCalls[0].ID != "a" {
		t.Fatalf("fence calls before b's activation: %d (%+v)", last.seq, w.fenceCalls)
	}
	if last.a.Token <= p.Token {
		t.Fatalf("b's token %d is not above a's %d", last.a.Token, p.Token)
	}
	w.checkNoOverlap(t)
	proxy.Heal()
	if err := a.wait(t); err == nil {
		t.Fatalf("a's Run returned nil after its session ended")
	}
	b.cancel()
	b.wait(t)
}

// TestPartitionedActiveStopsFirst: the active instance is only cut off;
// nothing expires its session on the server. Its Session declares itself
// Lost before the server can expire it, which cancels the active
// function's context; only then may the standby fence it and become
// active. The standby's fencing and active functions each check, when they
// run, that the old active's context is already cancelled.
func TestPartitionedActiveStopsFirst(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	proxy := shared.NewProxy(t)

	type record struct {
		what       string
		at         time.Time
		aCancelled bool // a's active context was cancelled at that moment
	}
	var (
		mu      sync.Mutex
		records []record
		aCtx    context.Context // a's active context
		fenced  []failover.Breadcrumb
	)
	note := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		records = append(records, record{what, time.Now(), aCtx != nil && aCtx.Err() != nil})
	}
	snapshot := func() []record {
		mu.Lock()
		defer mu.Unlock()
		return append([]record(nil), records...)
	}
	find := func(what string) (record, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range records {
			if r.what == what {
				return r, true
			}
		}
		return record{}, false
	}
	run := func(sess *zkcoord.Session, id string, fence failover.FenceFunc, active failover.ActiveFunc) chan error {
		f, err := failover.New(sess, path, fence, failover.WithID(id), failover.WithRetryDelay(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- f.Run(rctx, active) }()
		t.Cleanup(func() {
			cancel()
			<-done
		})
		return done
	}

	aDone := run(connect(t, proxy.Servers()), "a",
		func(context.Context, failover.Breadcrumb) error {
			note("a fence")
			return nil
		},
		func(ctx context.Context, _ failover.Activation) error {
			mu.Lock()
			aCtx = ctx
			mu.Unlock()
			note("a active")
			<-ctx.Done()
			note("a cancelled")
			return ctx.Err()
		})
	testkit.Eventually(t, long, "a active", func() bool { _, ok := find("a active"); return ok })

	sb := connect(t, shared.Servers())
	run(sb, "b",
		func(_ context.Context, prev failover.Breadcrumb) error {
			mu.Lock()
			fenced = append(fenced, prev)
			mu.Unlock()
			note("b fence")
			return nil
		},
		func(ctx context.Context, _ failover.Activation) error {
			note("b active")
			<-ctx.Done()
			return nil
		})
	testkit.Eventually(t, long, "b competing", func() bool {
		children, _, err := sb.Children(ctx, path+"/lock")
		return err == nil && len(children) == 2
	})

	cutAt := time.Now()
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, long, "b active", func() bool { _, ok := find("b active"); return ok })

	cancelled, okC := find("a cancelled")
	fence, okF := find("b fence")
	active, _ := find("b active")
	if !okF || !fence.aCancelled || !active.aCancelled {
		t.Fatalf("b fenced (%v) or became active while a's context was still open: %+v", okF, snapshot())
	}
	if _, ok := find("a fence"); ok {
		t.Fatalf("a ran its fencing function: %+v", snapshot())
	}
	mu.Lock()
	cause := context.Cause(aCtx)
	calls := append([]failover.Breadcrumb(nil), fenced...)
	mu.Unlock()
	if !errors.Is(cause, zkcoord.ErrSessionLost) {
		t.Fatalf("a's context ended with %v, want the Session's own loss declaration", cause)
	}
	if len(calls) != 1 || calls[0].ID != "a" {
		t.Fatalf("b fenced %+v, want a once", calls)
	}
	if okC {
		t.Logf("cut at 0; a saw its context cancelled after %v; b fenced after %v, active after %v",
			cancelled.at.Sub(cutAt).Round(time.Millisecond), fence.at.Sub(cutAt).Round(time.Millisecond),
			active.at.Sub(cutAt).Round(time.Millisecond))
	}
	select {
	case err := <-aDone:
		aDone <- err
		if !errors.Is(err, zkcoord.ErrSessionLost) {
			t.Fatalf("a: Run = %v, want a lost Session", err)
		}
	case <-time.After(long):
		t.Fatalf("a: Run did not return after its Session was lost")
	}
	proxy.Heal()
}

func TestActiveErrorLeavesBreadcrumb(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	w := newWorld()
	a := start(t, w, connect(t, shared.Servers()), path, "a")
	testkit.Eventually(t, long, "a active", func() bool { return w.current() == "a" })
	w.mu.Lock()
	close(w.fail["a"])
	w.mu.Unlock()
	if err := a.wait(t); !errors.Is(err, errBoom) {
		t.Fatalf("a: Run = %v, want the active function's error", err)
	}
	crumb, err := a.f.Breadcrumb(ctx)
	if err != nil || crumb == nil || crumb.ID != "a" {
		t.Fatalf("breadcrumb after an unclean stop: %+v, %v", crumb, err)
	}
	start(t, w, connect(t, shared.Servers()), path, "b")
	testkit.Eventually(t, long, "b active", func() bool { return w.current() == "b" })
	if last := w.lastActivation(); !last.a.Fenced || last.a.Previous.ID != "a" || last.seq != 1 {
		t.Fatalf("b's activation: %+v", last)
	}
	w.checkNoOverlap(t)
}

// TestFenceMustSucceed: a failing fencing function keeps the instance
// standing by; it becomes active only after fencing succeeds. The
// breadcrumb here is foreign (not JSON): it is fenced all the same.
func TestFenceMustSucceed(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	if err := sess.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, path+"/breadcrumb", []byte{0x0a, 0x03, 'x', 'y', 'z'}, 0); err != nil {
		t.Fatal(err)
	}
	w := newWorld()
	w.fenceErrs = 2
	events := newEventLog()
	b := start(t, w, sess, path, "b", failover.WithEvents(events.ch))
	testkit.Eventually(t, long, "b active", func() bool { return w.current() == "b" })
	last := w.lastActivation()
	if w.count() != 1 || last.seq != 3 || !last.a.Fenced || string(last.a.Previous.Raw) != "\n\x03xyz" {
		t.Fatalf("activations %d, fence calls before %d, activation %+v", w.count(), last.seq, last.a)
	}
	want := fmt.Sprint([]failover.EventType{
		failover.EventStandby, failover.EventFencing, failover.EventFenceFailed,
		failover.EventStandby, failover.EventFencing, failover.EventFenceFailed,
		failover.EventStandby, failover.EventFencing, failover.EventFenced, failover.EventActive})
	testkit.Eventually(t, long, "b's events up to active", func() bool { return len(events.types()) >= 10 })
	if got := fmt.Sprint(events.types()); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	b.cancel()
	b.wait(t)
}

// TestDeposedStandsByAgain: losing the lock while the Session lives
// stops the active function, and the instance competes again. Its own
// breadcrumb from the activation that just stopped needs no fencing.
func TestDeposedStandsByAgain(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	w := newWorld()
	sess := connect(t, shared.Servers())
	a := start(t, w, sess, path, "a")
	testkit.Eventually(t, long, "a active", func() bool { return w.current() == "a" })
	if _, err := sess.Set(ctx, a.f.Election().TermPath(), []byte(`{"id":"other"}`), -1); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, long, "second activation", func() bool { return w.count() == 2 && w.current() == "a" })
	second := w.lastActivation()
	if second.a.Fenced || second.a.Previous == nil || second.a.Previous.ID != "a" || len(w.fenceCalls) != 0 {
		t.Fatalf("second activation %+v, %d fence calls", second.a, len(w.fenceCalls))
	}
	if second.a.Token <= w.activations[0].a.Token {
		t.Fatalf("token did not grow")
	}
	a.cancel()
	a.wait(t)
	w.checkNoOverlap(t)
}

func TestNewAndRunMisuse(t *testing.T) {
	sess := connect(t, shared.Servers())
	w := newWorld()
	if _, err := failover.New(sess, "/x", nil); !errors.Is(err, failover.ErrNoFence) {
		t.Fatalf("nil fence: %v", err)
	}
	for _, p := range []string{"", "x", "/", "/x/"} {
		if _, err := failover.New(sess, p, w.fence); err == nil {
			t.Fatalf("path %q accepted", p)
		}
	}
	if _, err := failover.New(sess, "/x", w.fence, failover.WithID("")); err != nil {
		t.Fatalf("empty id means the default: %v", err)
	}
	if _, err := failover.New(sess, "/x", w.fence, failover.WithRetryDelay(-1)); err == nil {
		t.Fatalf("negative delay accepted")
	}
	if _, err := failover.New(nil, "/x", w.fence); err == nil {
		t.Fatalf("nil Session accepted")
	}
	f, err := failover.New(sess, uniquePath(t), w.fence)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.Run(ctx, w.active("x")) }()
	testkit.Eventually(t, long, "active", func() bool { return w.current() == "x" })
	if err := f.Run(ctx, w.active("y")); !errors.Is(err, failover.ErrRunning) {
		t.Fatalf("second Run: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRepeatedFailovers: three instances; the active one stops cleanly,
// loses its session, or fails, in turn, and is replaced by a new
// incarnation. Every activation after an unclean exit fenced exactly the
// previous active; every activation after a clean exit found nothing to
// fence; no two actives ever overlapped.
func TestRepeatedFailovers(t *testing.T) {
	ctx := testCtx(t, 2*long)
	path := uniquePath(t)
	w := newWorld()
	instances := map[string]*instance{}
	gen := 0
	spawn := func() {
		gen++
		id := fmt.Sprintf("i%d", gen)
		instances[id] = start(t, w, connect(t, shared.Servers()), path, id)
	}
	for i := 0; i < 3; i++ {
		spawn()
	}
	modes := []string{"clean", "expire", "error", "expire", "clean", "error", "expire"}
	clean := map[string]bool{}
	for round, mode := range modes {
		testkit.Eventually(t, long, "an active instance", func() bool { return w.current() != "" })
		n := w.count()
		cur := w.current()
		in := instances[cur]
		clean[cur] = mode == "clean"
		switch mode {
		case "clean":
			in.cancel()
		case "expire":
			if err := shared.ExpireSession(ctx, in.sess.ID(), in.sess.Password()); err != nil {
				t.Fatal(err)
			}
		case "error":
			w.mu.Lock()
			close(w.fail[cur])
			w.mu.Unlock()
		}
		err := in.wait(t)
		switch {
		case mode == "clean" && err != nil,
			mode == "error" && !errors.Is(err, errBoom),
			// Fencing may stop it before it learns that its session expired.
			mode == "expire" && err == nil:
			t.Fatalf("round %d (%s): Run = %v", round, mode, err)
		}
		delete(instances, cur)
		spawn()
		testkit.Eventually(t, long, "the next activation", func() bool { return w.count() > n })
	}
	w.checkNoOverlap(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := 1; i < len(w.activations); i++ {
		prev, next := w.activations[i-1], w.activations[i]
		if clean[prev.id] {
			if next.a.Previous != nil || next.a.Fenced {
				t.Errorf("activation %d (%s) after %s's clean exit: previous %+v fenced %v", i, next.id, prev.id, next.a.Previous, next.a.Fenced)
			}
			continue
		}
		if next.a.Previous == nil || next.a.Previous.ID != prev.id || !next.a.Fenced || next.a.Previous.Token != prev.a.Token {
			t.Errorf("activation %d (%s) after %s's unclean exit: previous %+v fenced %v", i, next.id, prev.id, next.a.Previous, next.a.Fenced)
		}
		if next.a.Token <= prev.a.Token {
			t.Errorf("activation %d: token %d after %d", i, next.a.Token, prev.a.Token)
		}
	}
	fenced := 0
	for _, c := range w.fenceCalls {
		if !clean[c.ID] {
			fenced++
		}
	}
	if fenced != len(w.fenceCalls) {
		t.Errorf("fenced cleanly stopped instances: %+v", w.fenceCalls)
	}
}

// TestWrappedElectionStopsStandby: once the election's sequence counter
// wrapped (here: a participant named with the first number after the
// wrap, as another client would have it), a standby that joins must not
// become active beside the active one, nor keep trying: Run returns an
// error wrapping zkcoord.ErrSequenceWrapped and leaves no node behind,
// and the active instance stays active.
func TestWrappedElectionStopsStandby(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	w := newWorld()
	a := start(t, w, connect(t, shared.Servers()), path, "a")
	testkit.Eventually(t, long, "a active", func() bool { return w.current() == "a" })
	other := connect(t, shared.Servers())
	dir := a.f.Election().Path()
	wrapped := dir + "/_c_3c9e1f0a-7b2d-4e5f-9a8b-1c2d3e4f5a6b-latch--2147483648"
	if _, err := other.Create(ctx, wrapped, []byte("wrapped"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	b := start(t, w, connect(t, shared.Servers()), path, "b")
	if err := b.wait(t); !errors.Is(err, zkcoord.ErrSequenceWrapped) {
		t.Fatalf("b: Run = %v, want zkcoord.ErrSequenceWrapped", err)
	}
	children, _, err := other.Children(ctx, dir)
	if err != nil || len(children) != 2 {
		t.Fatalf("participants after b stopped: %v (%v), want a's and the wrapped one", children, err)
	}
	if w.current() != "a" || w.count() != 1 {
		t.Fatalf("active %q after %d activations, want a alone", w.current(), w.count())
	}
	a.cancel()
	if err := a.wait(t); err != nil {
		t.Fatal(err)
	}
	w.checkNoOverlap(t)
}

// eventLog collects an instance's events from its WithEvents channel,
// which has room for every event a test causes.
type eventLog struct {
	mu   sync.Mutex
	ch   chan failover.Event
	seen []failover.EventType
}

func newEventLog() *eventLog { return &eventLog{ch: make(chan failover.Event, 1024)} }

// types returns the types of the events sent so far, in order.
func (l *eventLog) types() []failover.EventType {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.ch) > 0 {
		l.seen = append(l.seen, (<-l.ch).Type)
	}
	return slices.Clone(l.seen)
}
