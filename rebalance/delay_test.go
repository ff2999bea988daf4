package rebalance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

// long is a lock-delay no test waits out: a test that finishes shows it
// was not waited.
const long = 10 * time.Minute

// TestLockDelayAfterExpiry: the session of the member running a resource
// expires; the member that takes the resource over, with a lock-delay,
// calls Assigned only once the delay has passed since the expiry, and so
// never while the expired member may still run it. The expired member has
// no lock-delay: every member marks its barriers.
func TestLockDelayAfterExpiry(t *testing.T) {
	const d = 2 * time.Second
	root, group := newRoot(t), "g"
	op := connect(t)
	addResources(t, op, root, group, "r0")
	rec := newRecorder()
	ctx := testCtx(t, 90*time.Second)
	sa := connect(t)
	a := start(t, sa, root, group, rec.handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs r0", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0"})
	})
	starts := make(chan time.Time, 1)
	h := rec.handler("b")
	assigned := h.Assigned
	h.Assigned = func(ctx context.Context, as rebalance.Assignment) error {
		select {
		case starts <- time.Now():
		default:
		}
		return assigned(ctx, as)
	}
	b := start(t, connect(t), root, group, h, rebalance.WithLockDelay(d))
	testkit.WaitFor(t, 30*time.Second, "b joined", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, []string{"r0"})
	})
	begin := time.Now()
	if err := cluster.ExpireSession(ctx, sa.ID(), sa.Password()); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-starts:
		if took := at.Sub(begin); took < d {
			t.Errorf("b started r0 %v after a's session expired, before the lock-delay of %v", took, d)
		}
	case <-ctx.Done():
		t.Fatal("b did not start r0")
	}
	rec.check(t)
}

// TestLockDelayCleanHandover: in every mode, a new resource's first
// takeover, a resource that moves by a rebalancing and one whose owner
// leaves the group are handed over cleanly: no member waits its
// lock-delay. The member in the middle, b, has no lock-delay: its
// releases are marked all the same.
func TestLockDelayCleanHandover(t *testing.T) {
	for _, mode := range []rebalance.Mode{rebalance.Incremental, rebalance.ResourceBarrier, rebalance.GlobalBarrier} {
		t.Run(mode.String(), func(t *testing.T) {
			root, group := newRoot(t), "g"
			op := connect(t)
			resources := resourceIDs(2)
			addResources(t, op, root, group, resources...)
			rec := newRecorder()
			ctx := testCtx(t, 90*time.Second)
			runs := func(what string, clients ...*rebalance.Client) {
				t.Helper()
				testkit.WaitFor(t, 30*time.Second, what, func() error {
					return balanced(ctx, op, root, group, clients, resources)
				})
			}
			a := start(t, connect(t), root, group, rec.handler("a"), rebalance.WithMode(mode), rebalance.WithLockDelay(long))
			runs("a runs the new resources", a)
			b := start(t, connect(t), root, group, rec.handler("b"), rebalance.WithMode(mode))
			runs("a resource moved to b", a, b)
			if err := a.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			runs("b runs everything", b)
			c := start(t, connect(t), root, group, rec.handler("c"), rebalance.WithMode(mode), rebalance.WithLockDelay(long))
			runs("a resource moved from b to c", b, c)
			rec.check(t)
		})
	}
}

// TestLockDelayMarks: AddResource marks a new resource released, a take
// marks it held, RemoveResource deletes a released mark, and the clean
// release of a removed resource deletes its mark with the barrier.
func TestLockDelayMarks(t *testing.T) {
	root, group := newRoot(t), "g"
	path := zkcoord.Join(root, group)
	op := connect(t)
	ctx := testCtx(t, 60*time.Second)
	mark := rebalance.HandoverForTest(root, group, "r0")
	want := func(what, data string) {
		t.Helper()
		got, _, err := op.Get(ctx, mark)
		switch {
		case data == "" && !errors.Is(err, zkcoord.ErrNoNode):
			t.Fatalf("mark of r0 %s: %q, %v; want none", what, got, err)
		case data != "" && (err != nil || string(got) != data):
			t.Fatalf("mark of r0 %s: %q, %v; want %s", what, got, err, data)
		}
	}
	addResources(t, op, root, group, "r0")
	want("once added", "released")
	if err := rebalance.RemoveResource(ctx, op, path, "r0"); err != nil {
		t.Fatal(err)
	}
	want("once removed", "")
	addResources(t, op, root, group, "r0")
	want("once added again", "released")
	a := start(t, connect(t), root, group, newRecorder().handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs r0", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0"})
	})
	want("while a runs r0", "held")
	if err := rebalance.RemoveResource(ctx, op, path, "r0"); err != nil {
		t.Fatal(err)
	}
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	testkit.WaitFor(t, 30*time.Second, "a released r0", func() error {
		if ok, _, err := op.Exists(ctx, barriers+"/r0"); err != nil || ok {
			return errors.Join(err, errors.New("the barrier of r0 is still there"))
		}
		if n := len(a.Assignments()); n != 0 {
			return errors.New("a still runs r0")
		}
		return nil
	})
	want("once a released the removed r0", "")
}

// TestLockDelayAfterRemovalAndExpiry: a resource is removed while its
// owner, a, is still stopping it (as a paused owner would be), and a's
// session expires. The resource's mark says held and stays, so when the
// resource is added again, its next owner waits the lock-delay.
func TestLockDelayAfterRemovalAndExpiry(t *testing.T) {
	const d = 2 * time.Second
	root, group := newRoot(t), "g"
	path := zkcoord.Join(root, group)
	op := connect(t)
	addResources(t, op, root, group, "r0")
	ctx := testCtx(t, 90*time.Second)
	stopping, resume := make(chan struct{}, 1), make(chan struct{})
	sa := connect(t)
	a := start(t, sa, root, group, rebalance.Handler{
		Unassigned: func(rebalance.Assignment, error) error {
			stopping <- struct{}{}
			<-resume
			return nil
		},
	})
	t.Cleanup(func() { close(resume) }) // runs before a's Stop
	testkit.WaitFor(t, 30*time.Second, "a runs r0", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0"})
	})
	starts := make(chan time.Time, 1)
	start(t, connect(t), root, group, rebalance.Handler{
		Assigned: func(context.Context, rebalance.Assignment) error {
			select {
			case starts <- time.Now():
			default:
			}
			return nil
		},
	}, rebalance.WithLockDelay(d))
	if err := rebalance.RemoveResource(ctx, op, path, "r0"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopping:
	case <-ctx.Done():
		t.Fatal("a did not start stopping r0")
	}
	if err := cluster.ExpireSession(ctx, sa.ID(), sa.Password()); err != nil {
		t.Fatal(err)
	}
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	testkit.WaitFor(t, 30*time.Second, "a's barrier gone", func() error {
		if ok, _, err := op.Exists(ctx, barriers+"/r0"); err != nil || ok {
			return errors.Join(err, errors.New("the barrier of r0 is still there"))
		}
		return nil
	})
	begin := time.Now()
	addResources(t, op, root, group, "r0")
	select {
	case at := <-starts:
		if took := at.Sub(begin); took < d {
			t.Errorf("b started r0 %v after it was added again, before the lock-delay of %v", took, d)
		}
	case <-ctx.Done():
		t.Fatal("b did not start r0")
	}
}

// TestLockDelayTakeoverWithLostReply: the reply to the transaction that
// creates a barrier and marks its resource held is lost. The taker finds
// its barrier once connected again, and judges the handover by the mark
// that transaction checked (released), not by the mark as it is now
// (held, its own write).
func TestLockDelayTakeoverWithLostReply(t *testing.T) {
	observer, mark, clean := takeOverWithLostReply(t, nil)
	if data, _, err := observer.Get(testCtx(t, 30*time.Second), mark); err != nil || string(data) != "held" {
		t.Fatalf("mark after the takeover: %q, %v; want held", data, err)
	}
	if !clean {
		t.Fatal("the takeover after a clean release, whose reply was lost, was judged not clean")
	}
}

// TestTakeoverAfterMarkMadeAgainWithLostReply: between the taker's read
// of the handover mark ("released") and its transaction, the mark is
// deleted and made again "held" at version 0, as by another member whose
// take then ended unreleased. The transaction, checking version 0, goes
// through, and its reply is lost. The taker finds its own barrier, whose
// data say "clean" (the mark it read), but the mark its transaction set is
// not that one: the takeover must not count as clean.
func TestTakeoverAfterMarkMadeAgainWithLostReply(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	_, _, clean := takeOverWithLostReply(t, func(observer *zkcoord.Session, mark string) {
		if err := observer.Delete(ctx, mark, -1); err != nil {
			t.Error(err)
		}
		if _, err := observer.Create(ctx, mark, []byte("held"), zkcoord.FlagPersistent); err != nil {
			t.Error(err)
		}
	})
	if clean {
		t.Fatal("a takeover whose transaction set a mark made again, and whose reply was lost, counts as clean")
	}
}

// takeOverWithLostReply takes a barrier over, after a clean release (its
// handover mark "released"), so that the reply to the take's transaction
// is lost. If beforeCreate is not nil, the take calls it with the mark's
// path after reading the mark, before its transaction. It checks that the
// taker holds the barrier, that the barrier's data say the mark read was
// "released", and returns the observer Session, the mark's path and
// whether the take counted as clean.
func takeOverWithLostReply(t *testing.T, beforeCreate func(observer *zkcoord.Session, mark string)) (*zkcoord.Session, string, bool) {
	ctx := testCtx(t, 2*time.Minute)
	root := newRoot(t)
	p := cluster.NewProxy(t)
	// The test kit's session timeout outlasts the cut; no chroot, as observer.
	taker := testkit.Connect(t, p.Servers(), func(c *zkcoord.Config) { c.Chroot = "" })
	observer := connect(t)
	if err := observer.EnsurePath(ctx, root); err != nil {
		t.Fatal(err)
	}
	// A take's transaction reply is read together with the barrier's,
	// which waits for the connection to come back: the taker learns of
	// the loss only then, so the fault is driven by its suspension.
	suspended := make(chan struct{}, 1)
	go func() {
		for sc := range taker.Watch(ctx) {
			if sc.State == zkcoord.Suspended {
				select {
				case suspended <- struct{}{}:
				default:
				}
			}
		}
	}()
	var (
		n           int
		path, mark  string // of the current attempt
		token       int64
		clean, lost bool
	)
	if beforeCreate != nil {
		rebalance.SetBeforeBarrierCreateHookForTest(t, func() { beforeCreate(observer, mark) })
	}
	testkit.UntilLost(t, func(delay time.Duration) bool {
		n++
		path, mark = fmt.Sprintf("%s/barrier%d", root, n), fmt.Sprintf("%s/mark%d", root, n)
		if _, err := observer.Create(ctx, mark, []byte("released"), zkcoord.FlagPersistent); err != nil {
			t.Fatal(err)
		}
		if err := taker.Sync(ctx, mark); err != nil { // the taker's server has the mark
			t.Fatal(err)
		}
		select {
		case <-suspended: // an earlier suspension
		default:
		}
		var err error
		lost, err = testkit.LoseReply(t, ctx, p, observer, path, delay, suspended, func() error {
			var err error
			token, clean, err = rebalance.TakeOverForTest(ctx, taker, path, mark, "c_0000000001")
			return err
		})
		if err != nil {
			t.Fatalf("takeover: %v", err)
		}
		return lost
	})
	data, st, err := observer.Get(ctx, path)
	if err != nil || st.Czxid != token || st.EphemeralOwner != taker.ID() {
		t.Fatalf("barrier after the takeover: %+v, %v; token %d", st, err, token)
	}
	if !strings.Contains(string(data), `"clean":true`) {
		t.Fatalf("barrier data %s: the take did not read the mark released", data)
	}
	return observer, mark, clean
}

// TestLockDelayBadInput: a negative lock-delay is refused before anything
// is written.
func TestLockDelayBadInput(t *testing.T) {
	root := newRoot(t)
	sess := connect(t)
	ctx := testCtx(t, 30*time.Second)
	_, err := rebalance.Start(ctx, sess, zkcoord.Join(root, "g"), rebalance.Handler{}, rebalance.WithLockDelay(-time.Second))
	if !errors.Is(err, rebalance.ErrInvalidOption) {
		t.Fatalf("Start with a negative lock-delay: %v, want ErrInvalidOption", err)
	}
	if ok, _, err := sess.Exists(ctx, root); err != nil || ok {
		t.Fatalf("group root after the refusal: exists %v, %v", ok, err)
	}
}

// TestLockDelayGivenBackDuringDelay: b takes r0 over after a's session
// expired and waits its lock-delay; r0 is removed meanwhile, so b gives
// the barrier back without having started r0. Its release leaves the mark
// "held" rather than marking r0 released (or deleting the mark with the
// removed resource): a may still be paused, and whoever runs r0 next must
// wait the delay too (model/handover.pml -DMARK_CANCELLED finds the
// overlap otherwise).
func TestLockDelayGivenBackDuringDelay(t *testing.T) {
	root, group := newRoot(t), "g"
	path := zkcoord.Join(root, group)
	op := connect(t)
	addResources(t, op, root, group, "r0")
	ctx := testCtx(t, 90*time.Second)
	sa := connect(t)
	a := start(t, sa, root, group, newRecorder().handler("a"))
	testkit.WaitFor(t, 30*time.Second, "a runs r0", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a}, []string{"r0"})
	})
	started := make(chan struct{}, 1)
	sb := connect(t)
	b := start(t, sb, root, group, rebalance.Handler{
		Assigned: func(context.Context, rebalance.Assignment) error {
			select {
			case started <- struct{}{}:
			default:
			}
			return nil
		},
	}, rebalance.WithLockDelay(long))
	testkit.WaitFor(t, 30*time.Second, "b joined", func() error {
		return balanced(ctx, op, root, group, []*rebalance.Client{a, b}, []string{"r0"})
	})
	if err := cluster.ExpireSession(ctx, sa.ID(), sa.Password()); err != nil {
		t.Fatal(err)
	}
	_, _, barriers, _ := rebalance.PathsForTest(root, group)
	testkit.WaitFor(t, 30*time.Second, "b's barrier on r0", func() error {
		ok, st, err := op.Exists(ctx, barriers+"/r0")
		if err != nil || !ok || st.EphemeralOwner != sb.ID() {
			return errors.Join(err, errors.New("r0 has no barrier of b's"))
		}
		return nil
	})
	if err := rebalance.RemoveResource(ctx, op, path, "r0"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "b gave r0 back", func() error {
		if ok, _, err := op.Exists(ctx, barriers+"/r0"); err != nil || ok {
			return errors.Join(err, errors.New("the barrier of r0 is still there"))
		}
		return nil
	})
	data, _, err := op.Get(ctx, rebalance.HandoverForTest(root, group, "r0"))
	if err != nil || string(data) != "held" {
		t.Fatalf("mark of r0 after b gave it back during its delay: %q, %v; want held", data, err)
	}
	select {
	case <-started:
		t.Fatal("b started r0 before its lock-delay had passed")
	default:
	}
}
