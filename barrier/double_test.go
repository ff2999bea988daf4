package barrier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/testkit"
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
