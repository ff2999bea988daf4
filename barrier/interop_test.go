package barrier

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// expectNot checks that a peer does not print a line starting with prefix
// within d. Like notWithin, a slow machine can only make it pass.
func expectNot(t *testing.T, p *interop.Proc, prefix string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if line, err := p.Expect(ctx, prefix); err == nil {
		t.Fatalf("peer printed %q too early", line)
	}
}

func expect(t *testing.T, ctx context.Context, p *interop.Proc, prefix string) {
	t.Helper()
	if _, err := p.Expect(ctx, prefix); err != nil {
		t.Fatalf("waiting for %q: %v\nstderr: %s", prefix, err, p.Stderr())
	}
}

// Two Go members and two Curator members share one double barrier: neither
// side enters or leaves before the other.
func TestDoubleBarrierWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const n = 4
	sess := connect(t)
	chroot := sess.Config().Chroot
	path := "/mixed/double"

	prog := interop.CompileJava(t, "testdata/DoubleBarrierPeer.java")
	var java []*interop.Proc
	for range 2 {
		p := prog.Start(t, cluster.ConnectString(), chroot+path, strconv.Itoa(n))
		java = append(java, p)
	}
	for _, p := range java {
		expect(t, ctx, p, "ready")
	}
	a, _ := NewDouble(sess, path, n)
	b, _ := NewDouble(connect(t), path, n)

	entered := make(chan error, 2)
	go func() { entered <- a.Enter(ctx) }()
	for _, p := range java {
		if err := p.Send("enter"); err != nil {
			t.Fatal(err)
		}
		expect(t, ctx, p, "entering")
	}
	testkit.WaitFor(t, 30*time.Second, "three members", func() error {
		select {
		case err := <-entered:
			t.Fatalf("Enter returned early: %v", err)
		default:
		}
		c, err := a.list(ctx)
		if len(c) < 3 {
			return fmt.Errorf("members %v, %v", c, err)
		}
		return nil
	})
	// Three of four members are in: nobody, Java or Go, may pass.
	if !notWithin(entered, 300*time.Millisecond) {
		t.Fatal("a Go member entered before the group was complete")
	}
	for _, p := range java {
		expectNot(t, p, "entered", 100*time.Millisecond)
	}
	go func() { entered <- b.Enter(ctx) }()
	for range 2 {
		if err := <-entered; err != nil {
			t.Fatalf("Enter: %v", err)
		}
	}
	for _, p := range java {
		expect(t, ctx, p, "entered")
	}

	// One Go and one Java member leave; they must wait for the others.
	left := make(chan error, 2)
	go func() { left <- a.Leave(ctx) }()
	if err := java[0].Send("leave"); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, java[0], "leaving")
	if !notWithin(left, 300*time.Millisecond) {
		t.Fatal("a Go member left while others were still in")
	}
	expectNot(t, java[0], "left", 100*time.Millisecond)

	go func() { left <- b.Leave(ctx) }()
	if err := java[1].Send("leave"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-left; err != nil {
			t.Fatalf("Leave: %v", err)
		}
	}
	for _, p := range java {
		expect(t, ctx, p, "left")
	}
	if c, _ := a.list(ctx); len(c) != 0 {
		t.Fatalf("members left behind: %v", c)
	}
}

// A Barrier and Curator's DistributedBarrier at the same path hold each
// other's waiters.
func TestBarrierWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess := connect(t)
	path := "/mixed/gate"
	java := interop.CompileJava(t, "testdata/DoubleBarrierPeer.java").
		Start(t, cluster.ConnectString(), sess.Config().Chroot+path, "1")
	expect(t, ctx, java, "ready")
	b, _ := New(sess, path)

	// Curator sets, Go waits, Curator removes.
	if err := java.Send("set"); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, java, "set")
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	if !notWithin(done, 300*time.Millisecond) {
		t.Fatal("Go passed a barrier set by Curator")
	}
	if err := java.Send("remove"); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, java, "removed")
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Go sets, Curator waits, Go removes.
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if err := java.Send("wait"); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, java, "waiting")
	expectNot(t, java, "waited", 300*time.Millisecond)
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, java, "waited")
}
