package rebalance_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
	"github.com/zkcoord/zkcoord/zktest"
)

// TestZombieCoordinatorWriteFails: once another coordinator has bumped the
// term, every write of the old coordinator fails, and the old coordinator
// abdicates (here: recovers as a new client).
func TestZombieCoordinatorWriteFails(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(4)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	a, err := rebalance.StartConfig(ctx, config(cluster.Servers()), zkcoord.Join(root, group), rec.handler("a"),
		rebalance.WithMinInterval(0), rebalance.WithAutoRecovery(true))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(ctx)
	testkit.WaitFor(t, 30*time.Second, "a runs everything", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources) })
	oldID := a.ID()

	termPath, resPath, _, _ := rebalance.PathsForTest(root, group)
	_, termStat, err := op.Get(ctx, termPath)
	if err != nil {
		t.Fatal(err)
	}
	oldTerm := int64(termStat.Version)
	data, resStat, err := op.Get(ctx, resPath)
	if err != nil {
		t.Fatal(err)
	}
	// Another coordinator takes over: it bumps the term.
	if _, err := op.Set(ctx, termPath, []byte(`{"coordinator":"intruder"}`), -1); err != nil {
		t.Fatal(err)
	}
	// The old coordinator's conditional write now fails, whatever it writes.
	zombie := alloc.Record{Term: oldTerm, Generation: 99, Assignment: alloc.Assignment{"c_0000000099": resources}}
	err = rebalance.WriteAllocationForTest(ctx, op, root, group, oldTerm, resStat.Version, zombie)
	if !errors.Is(err, rebalance.ErrDeposed) {
		t.Fatalf("zombie write: %v, want ErrDeposed", err)
	}
	after, _, err := op.Get(ctx, resPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(data) {
		got, _ := alloc.Decode(after)
		if got.Generation == 99 {
			t.Fatalf("zombie write went through")
		}
	}
	// The deposed client gives everything up and rejoins as a new client.
	testkit.WaitFor(t, 30*time.Second, "a rejoined", func() error {
		if a.ID() == oldID {
			return fmt.Errorf("still %s", oldID)
		}
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources)
	})
	rec.check(t)
}

// TestHandlerPanicAborts: a panic in Assigned stops everything in a
// controlled way, leaves the group, reports ErrHandler, and another client
// takes over.
func TestHandlerPanicAborts(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(4)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	h := rec.handler("a")
	inner := h.Assigned
	h.Assigned = func(ctx context.Context, as rebalance.Assignment) error {
		if as.Resource == resources[2] {
			panic("boom")
		}
		return inner(ctx, as)
	}
	var aborted atomic.Int32
	var abortErr atomic.Value
	h.Aborted = func(err error) {
		aborted.Add(1)
		abortErr.Store(err)
	}
	ctx := testCtx(t, 60*time.Second)
	sess := connect(t)
	a, err := rebalance.Start(ctx, sess, zkcoord.Join(root, group), h, rebalance.WithMinInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("client did not abort")
	}
	if !errors.Is(a.Err(), rebalance.ErrHandler) || a.State() != rebalance.Aborted {
		t.Fatalf("Err %v state %v, want ErrHandler, Aborted", a.Err(), a.State())
	}
	if n := aborted.Load(); n != 1 {
		t.Fatalf("Aborted called %d times", n)
	}
	if err, _ := abortErr.Load().(error); !errors.Is(err, rebalance.ErrHandler) {
		t.Fatalf("Aborted(%v)", err)
	}
	if h := rec.holders(); len(h) != 0 {
		t.Fatalf("still running after abort: %v", h)
	}
	if len(a.Assignments()) != 0 {
		t.Fatalf("assignments after abort: %v", a.Assignments())
	}
	// It left the group and deleted its barriers: someone else takes over.
	d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Members) != 0 || len(d.Barriers) != 0 {
		t.Fatalf("after abort: members %v barriers %v", d.Members, d.Barriers)
	}
	b := start(t, connect(t), root, group, rec.handler("b"))
	testkit.WaitFor(t, 30*time.Second, "b runs everything", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{b}, resources) })
	rec.check(t)
	if sess.Err() != nil {
		t.Fatalf("the caller's Session was closed: %v", sess.Err())
	}
}

// TestCorruptAllocation: foreign data in the resources node is a clear
// error for clients and for Describe, never a panic.
func TestCorruptAllocation(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, resourceIDs(3)...)
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	a := start(t, connect(t), root, group, rec.handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs everything", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a}, resourceIDs(3)) })
	_, resPath, _, _ := rebalance.PathsForTest(root, group)
	if _, err := op.Set(ctx, resPath, []byte(`{"not":"an allocation"}`), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("client did not abort")
	}
	if !errors.Is(a.Err(), alloc.ErrCorrupt) {
		t.Fatalf("Err %v, want alloc.ErrCorrupt", a.Err())
	}
	if h := rec.holders(); len(h) != 0 {
		t.Fatalf("still running: %v", h)
	}
	d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
	if !errors.Is(err, alloc.ErrCorrupt) || d == nil || d.AllocationError == "" {
		t.Fatalf("describe: %v, %+v", err, d)
	}
	// A new client refuses to work with it too.
	b, err := rebalance.Start(ctx, connect(t), zkcoord.Join(root, group), rec.handler("b"))
	if err != nil {
		t.Fatal(err)
	}
	<-b.Done()
	if !errors.Is(b.Err(), alloc.ErrCorrupt) {
		t.Fatalf("new client: %v", b.Err())
	}
	rec.check(t)
}

// TestClientNodeDeleted: a client whose node someone deleted treats that as
// the loss of its membership.
func TestClientNodeDeleted(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(4)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)
	a := start(t, connect(t), root, group, rec.handler("a"))
	b := start(t, connect(t), root, group, rec.handler("b"))
	testkit.WaitFor(t, 30*time.Second, "balanced", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, resources) })
	for _, victim := range []*rebalance.Client{b, a} { // a follower, then the coordinator
		d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, clients := rebalance.PathsForTest(root, group)
		for _, m := range d.Members {
			if m.ID == victim.ID() {
				if err := op.Delete(ctx, clients+"/"+m.Node, -1); err != nil {
					t.Fatal(err)
				}
			}
		}
		select {
		case <-victim.Done():
		case <-ctx.Done():
			t.Fatal("client did not notice")
		}
		if !errors.Is(victim.Err(), rebalance.ErrMembershipLost) {
			t.Fatalf("Err %v, want ErrMembershipLost", victim.Err())
		}
	}
	if h := rec.holders(); len(h) != 0 {
		t.Fatalf("still running: %v", h)
	}
	rec.check(t)
}

// TestBarrierOrdersHandOver: a new owner starts a resource only after the
// previous owner's Unassigned returned, however long that takes; a client
// that leaves while waiting for a barrier stops waiting.
func TestBarrierOrdersHandOver(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := []string{"r0", "r1"}
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)

	release := make(chan struct{})
	var once sync.Once
	h := rec.handler("a")
	inner := h.Unassigned
	h.Unassigned = func(as rebalance.Assignment, cause error) error {
		if as.Resource == "r1" {
			once.Do(func() { <-release })
		}
		return inner(as, cause)
	}
	a := start(t, connect(t), root, group, h)
	testkit.WaitFor(t, 30*time.Second, "a runs both", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources) })

	b := start(t, connect(t), root, group, rec.handler("b"))
	testkit.WaitFor(t, 30*time.Second, "r1 allocated to b, barrier still a's", func() error {
		d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
		if err != nil {
			return err
		}
		if len(d.Pending) != 1 || d.Pending[0].Resource != "r1" || d.Pending[0].From != a.ID() || d.Pending[0].To != b.ID() {
			return fmt.Errorf("pending %+v", d.Pending)
		}
		return nil
	})
	if len(b.Assignments()) != 0 {
		t.Fatalf("b started %v before a released it", b.Assignments())
	}
	// b leaves while waiting for the barrier: Stop does not wait for it.
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	testkit.WaitFor(t, 30*time.Second, "a runs both again", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a}, resources) })

	c := start(t, connect(t), root, group, rec.handler("c"), rebalance.WithStartDelay(200*time.Millisecond))
	testkit.WaitFor(t, 30*time.Second, "balanced with c", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a, c}, resources) })
	rec.check(t)
}

// TestSessionLossStopsEverything: a partitioned client stops everything
// when its Session is lost, before the server expires the session and lets
// another client in; once healed it rejoins as a new client, and its
// recovery events report the loss and the recovery on a new session.
func TestSessionLossStopsEverything(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(6)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	ctx := testCtx(t, 90*time.Second)
	proxy := cluster.NewProxy(t)
	a, log := startRecovering(t, ctx, proxy.Servers(), zktest.NewSessionRecorder(nil), root, group, rec.handler("a"))
	b := start(t, connect(t), root, group, rec.handler("b"))
	testkit.WaitFor(t, 30*time.Second, "balanced", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, resources) })
	oldID, before := a.ID(), a.Assignments()
	started, _, _ := log.find(zkcoord.SessionStarted, 0)

	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "b runs everything", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{b}, resources) })
	if n := len(a.Assignments()); n != 0 {
		t.Fatalf("partitioned client still runs %d resources", n)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 60*time.Second, "a rejoined", func() error {
		if a.ID() == oldID {
			return fmt.Errorf("not rejoined")
		}
		return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, resources)
	})
	checkRecoveredAfter(t, log, a, oldID, started.Session, before)
	if ended, _, _ := log.find(zkcoord.SessionEnded, 0); !errors.Is(ended.Err, zkcoord.ErrSessionLost) {
		t.Errorf("session ended with %v, want ErrSessionLost", ended.Err)
	}
	rec.check(t)
	rec.mu.Lock()
	lost := 0
	for _, c := range rec.causes {
		if errors.Is(c, zkcoord.ErrSessionLost) {
			lost++
		}
	}
	rec.mu.Unlock()
	if lost != 3 {
		t.Errorf("%d resources stopped for session loss, want 3", lost)
	}
}

// TestRemovedResourceKeepsBarrier: removing a resource never deletes its
// barrier. While the owner of a removed resource is still stopping it, the
// resource is registered again and allocated to another client, which
// starts it only once the previous owner's Unassigned has returned.
func TestRemovedResourceKeepsBarrier(t *testing.T) {
	root, group := newRoot(t), "g"
	op := connect(t)
	resources := resourceIDs(3)
	addResources(t, op, root, group, resources...)
	rec := newRecorder()
	ctx := testCtx(t, 60*time.Second)

	var (
		mu      sync.Mutex
		target  string                 // set once the test picks the resource to remove
		held    bool                   // an Unassigned of target was held up
		entered = make(chan error, 1)  // cause of the held-up Unassigned
		release = make(chan struct{})  // lets it return
		resumed = make(chan string, 1) // client that started target again
	)
	hook := func(name string) rebalance.Handler {
		h := rec.handler(name)
		assigned, unassigned := h.Assigned, h.Unassigned
		h.Assigned = func(ctx context.Context, as rebalance.Assignment) error {
			err := assigned(ctx, as)
			mu.Lock()
			watched := as.Resource == target
			mu.Unlock()
			if watched {
				select {
				case resumed <- as.Client:
				default:
				}
			}
			return err
		}
		h.Unassigned = func(as rebalance.Assignment, cause error) error {
			mu.Lock()
			hold := as.Resource == target && !held // only the first is held up
			held = held || hold
			mu.Unlock()
			if hold {
				entered <- cause
				<-release
			}
			return unassigned(as, cause)
		}
		return h
	}
	a := start(t, connect(t), root, group, hook("a"))
	b := start(t, connect(t), root, group, hook("b"))
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the clients are stopped
	testkit.WaitFor(t, 30*time.Second, "balanced", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, resources) })

	// The resource is taken from the client with the larger id: once it is
	// registered again, the sticky allocation gives it to the other one.
	old, next := b, a
	if a.ID() > b.ID() {
		old, next = a, b
	}
	x := old.Assignments()[0].Resource
	mu.Lock()
	target = x
	mu.Unlock()
	if err := rebalance.RemoveResource(ctx, op, zkcoord.Join(root, group), x); err != nil {
		t.Fatal(err)
	}
	select {
	case cause := <-entered:
		if !errors.Is(cause, rebalance.ErrRemoved) {
			t.Fatalf("Unassigned(%s) cause %v, want ErrRemoved", x, cause)
		}
	case <-ctx.Done():
		t.Fatalf("%s was not unassigned after its removal", x)
	}
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	ok, st, err := op.Exists(ctx, barriers+"/"+x)
	if err != nil || !ok {
		t.Fatalf("barrier of the removed resource %s: exists %v, %v; want it kept until Unassigned returns", x, ok, err)
	}

	addResources(t, op, root, group, x)
	testkit.WaitFor(t, 30*time.Second, x+" allocated to "+next.ID()+", barrier still held by "+old.ID(), func() error {
		d, err := rebalance.Describe(ctx, op, zkcoord.Join(root, group))
		if err != nil {
			return err
		}
		for _, m := range d.Pending {
			if m.Resource == x && m.From == old.ID() && m.To == next.ID() {
				return nil
			}
		}
		return fmt.Errorf("pending %+v", d.Pending)
	})
	select {
	case who := <-resumed:
		t.Fatalf("%s started %s while %s's Unassigned was still running", who, x, old.ID())
	case <-time.After(500 * time.Millisecond):
	}
	if ok, st2, err := op.Exists(ctx, barriers+"/"+x); err != nil || !ok || st2.Czxid != st.Czxid {
		t.Fatalf("barrier of %s changed while its owner was stopping it: exists %v, %v", x, ok, err)
	}

	unblock()
	select {
	case who := <-resumed:
		if who != next.ID() {
			t.Fatalf("%s started %s, want %s", who, x, next.ID())
		}
	case <-ctx.Done():
		t.Fatalf("%s was not started again", x)
	}
	testkit.WaitFor(t, 30*time.Second, "balanced again", func() error { return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, resources) })
	rec.check(t)
}
