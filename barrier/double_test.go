package barrier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func TestDoubleBarrierEnterAndLeave(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	const n = 3
	path := "/work/double"
	var members []*DoubleBarrier
	for range n {
		d, err := NewDouble(connect(t), path, n)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, d)
	}
	observer := connect(t)

	entered := make(chan error, n)
	for _, d := range members[:n-1] {
		go func() { entered <- d.Enter(ctx) }()
	}
	// Two of three members are in: nobody may pass.
	testkit.WaitFor(t, 30*time.Second, "two member nodes", func() error {
		c, _, err := observer.Children(ctx, path)
		if err != nil {
			return err
		}
		if len(c) != n-1 {
			return errors.New("not yet")
		}
		return nil
	})
	if !notWithin(entered, 300*time.Millisecond) {
		t.Fatal("a member entered before the group was complete")
	}
	go func() { entered <- members[n-1].Enter(ctx) }()
	for range n {
		if err := <-entered; err != nil {
			t.Fatalf("Enter: %v", err)
		}
	}
	if ok, _, err := observer.Exists(ctx, path+"/ready"); err != nil || !ok {
		t.Fatalf("ready node exists = %v, %v; want true", ok, err)
	}

	left := make(chan error, n)
	for _, d := range members[:n-1] {
		go func() { left <- d.Leave(ctx) }()
	}
	// Wait until the leavers are blocked: by Curator's algorithm the lowest
	// member stays and waits for the highest, the others delete their
	// nodes and wait for the lowest.
	stay := members[n-1]
	lowest := slices.MinFunc(members, func(a, b *DoubleBarrier) int { return strings.Compare(a.id, b.id) })
	remaining := []string{stay.id}
	watches := map[*zkcoord.Session]string{}
	for _, d := range members[:n-1] {
		if d == lowest {
			remaining = append(remaining, d.id)
			watches[d.sess] = stay.node()
		} else {
			watches[d.sess] = lowest.node()
		}
	}
	waitMembers(t, ctx, observer, path, remaining...)
	waitWatches(t, ctx, observer, watches)
	if !notWithin(left, 300*time.Millisecond) {
		t.Fatal("a member left before every member had left")
	}
	go func() { left <- members[n-1].Leave(ctx) }()
	for range n {
		if err := <-left; err != nil {
			t.Fatalf("Leave: %v", err)
		}
	}
	c, _, err := observer.Children(ctx, path)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		t.Fatal(err)
	}
	if len(c) != 0 {
		t.Fatalf("children left after everyone left: %v", c)
	}
}

func TestDoubleBarrierIgnoresForeignChildren(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	path := "/foreign"
	sess := connect(t)
	if err := sess.EnsurePath(ctx, path+"/not-a-member"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, path+"/lock-0000000001", []byte("x"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	a, _ := NewDouble(sess, path, 2)
	b, _ := NewDouble(connect(t), path, 2)
	done := make(chan error, 2)
	go func() { done <- a.Enter(ctx) }()
	if !notWithin(done, 300*time.Millisecond) {
		t.Fatal("foreign children were counted as members")
	}
	go func() { done <- b.Enter(ctx) }()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	go func() { done <- a.Leave(ctx) }()
	go func() { done <- b.Leave(ctx) }()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestDoubleBarrierFailedEnterRemovesMember(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	d, _ := NewDouble(sess, "/lonely", 2)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := d.Enter(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter = %v; want DeadlineExceeded", err)
	}
	if ok, _, err := sess.Exists(ctx, "/lonely/"+d.ID()); err != nil || ok {
		t.Fatalf("member node exists after a failed Enter = %v, %v", ok, err)
	}
}

func TestDoubleBarrierMemberSessionEnds(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	path := "/crash"
	a, _ := NewDouble(connect(t), path, 2)
	crashing := connect(t)
	b, _ := NewDouble(crashing, path, 2)
	done := make(chan error, 2)
	go func() { done <- a.Enter(ctx) }()
	go func() { done <- b.Enter(ctx) }()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// b's process dies inside the barrier: its node goes with its session,
	// so a can still leave.
	crashing.Close(ctx)
	if err := a.Leave(ctx); err != nil {
		t.Fatalf("Leave after the other member died: %v", err)
	}
	if err := b.Leave(ctx); !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Fatalf("Leave on a closed session = %v; want ErrSessionClosed", err)
	}
}

// waitMembers waits until the member nodes under path are exactly ids.
func waitMembers(t *testing.T, ctx context.Context, observer *zkcoord.Session, path string, ids ...string) {
	t.Helper()
	want := slices.Sorted(slices.Values(ids))
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("members %v", want), func() error {
		c, _, err := observer.Children(ctx, path)
		if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
			return err
		}
		got := slices.DeleteFunc(c, func(n string) bool { return !isMember(n) })
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("members %v", got)
		}
		return nil
	})
}

// waitWatches waits until each session holds a data watch on its node
// (paths within the observer's chroot).
func waitWatches(t *testing.T, ctx context.Context, observer *zkcoord.Session, want map[*zkcoord.Session]string) {
	t.Helper()
	root := observer.Config().Chroot
	testkit.WaitFor(t, 30*time.Second, "watches", func() error {
		w, err := cluster.Server(0).Wchc(ctx)
		if err != nil {
			return err
		}
		for sess, p := range want {
			if !slices.Contains(w[sess.ID()], root+p) {
				return fmt.Errorf("session %#x watches %v, not %s", sess.ID(), w[sess.ID()], root+p)
			}
		}
		return nil
	})
}

// result waits for a member's Enter or Leave.
func result(t *testing.T, ctx context.Context, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		t.Fatalf("%s never returned", what)
		return nil
	}
}

// doubles returns count members of the double barrier at path for a group
// of n, each in its own Session, ordered by ID (the order Leave goes by).
func doubles(t *testing.T, path string, count, n int) []*DoubleBarrier {
	t.Helper()
	var ds []*DoubleBarrier
	for range count {
		d, err := NewDouble(connect(t), path, n)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b *DoubleBarrier) int { return strings.Compare(a.id, b.id) })
	return ds
}

// The lowest member's session expires while it waits in Leave. It gets the
// Session's error; a member that had already left does not return while
// another is still in, and returns once that one leaves.
func TestDoubleBarrierMemberExpiresInLeave(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	path := "/expire-leave"
	ds := doubles(t, path, 3, 3)
	low, mid, high := ds[0], ds[1], ds[2]
	observer := connect(t)
	entered := make(chan error, 3)
	for _, d := range ds {
		go func() { entered <- d.Enter(ctx) }()
	}
	for range ds {
		if err := result(t, ctx, entered, "Enter"); err != nil {
			t.Fatalf("Enter: %v", err)
		}
	}

	lowLeft, midLeft := make(chan error, 1), make(chan error, 1)
	go func() { lowLeft <- low.Leave(ctx) }()
	go func() { midLeft <- mid.Leave(ctx) }()
	// mid has deleted its node and waits for low; low waits for high.
	waitMembers(t, ctx, observer, path, low.id, high.id)
	waitWatches(t, ctx, observer, map[*zkcoord.Session]string{low.sess: high.node(), mid.sess: low.node()})

	if err := cluster.ExpireSession(ctx, low.sess.ID(), low.sess.Password()); err != nil {
		t.Fatal(err)
	}
	if err := result(t, ctx, lowLeft, "Leave of the expired member"); !errors.Is(err, zkcoord.ErrSessionExpired) {
		t.Fatalf("Leave of the expired member = %v; want ErrSessionExpired", err)
	}
	// low's node went with its session; mid now waits for high.
	waitMembers(t, ctx, observer, path, high.id)
	waitWatches(t, ctx, observer, map[*zkcoord.Session]string{mid.sess: high.node()})
	if !notWithin(midLeft, 300*time.Millisecond) {
		t.Fatal("a member left while another was still in the barrier")
	}

	highLeft := make(chan error, 1)
	go func() { highLeft <- high.Leave(ctx) }()
	for what, ch := range map[string]chan error{"Leave of the last member": highLeft, "Leave of the waiting member": midLeft} {
		if err := result(t, ctx, ch, what); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if c, _, err := observer.Children(ctx, path); (err != nil && !errors.Is(err, zkcoord.ErrNoNode)) || len(c) != 0 {
		t.Fatalf("children after everyone left: %v, %v", c, err)
	}
}

// A member's session expires while it waits in Enter. It gets the
// Session's error and no longer counts: the group completes only with as
// many live members.
func TestDoubleBarrierMemberExpiresInEnter(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	path := "/expire-enter"
	ds := doubles(t, path, 3, 2)
	gone, a, b := ds[0], ds[1], ds[2]
	observer := connect(t)

	goneEntered := make(chan error, 1)
	go func() { goneEntered <- gone.Enter(ctx) }()
	waitMembers(t, ctx, observer, path, gone.id)
	waitWatches(t, ctx, observer, map[*zkcoord.Session]string{gone.sess: gone.ready()})
	if err := cluster.ExpireSession(ctx, gone.sess.ID(), gone.sess.Password()); err != nil {
		t.Fatal(err)
	}
	if err := result(t, ctx, goneEntered, "Enter of the expired member"); !errors.Is(err, zkcoord.ErrSessionExpired) {
		t.Fatalf("Enter of the expired member = %v; want ErrSessionExpired", err)
	}
	waitMembers(t, ctx, observer, path)

	entered := make(chan error, 2)
	go func() { entered <- a.Enter(ctx) }()
	waitMembers(t, ctx, observer, path, a.id)
	waitWatches(t, ctx, observer, map[*zkcoord.Session]string{a.sess: a.ready()})
	if !notWithin(entered, 300*time.Millisecond) {
		t.Fatal("a member entered with only one live member in the group")
	}
	go func() { entered <- b.Enter(ctx) }()
	for range 2 {
		if err := result(t, ctx, entered, "Enter"); err != nil {
			t.Fatalf("Enter: %v", err)
		}
	}
}
