package config

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// throughProxy connects a Session whose traffic goes through a fault proxy.
func throughProxy(t *testing.T) (*zkcoord.Session, *zktest.Proxy) {
	p := cluster.NewProxy(t)
	return connect(t, func(c *zkcoord.Config) { c.Servers = p.Servers() }), p
}

// hookUnknown installs testHookOutcomeUnknown; the channel receives when a
// write's outcome has become unknown.
func hookUnknown(t *testing.T) <-chan struct{} {
	unknown := make(chan struct{}, 1)
	testHookOutcomeUnknown = func() {
		select {
		case unknown <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
	return unknown
}

func heal(t *testing.T, p *zktest.Proxy) {
	t.Helper()
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
}

// await returns write's result, or fails the test when ctx ends first.
func await(t *testing.T, ctx context.Context, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatal("the write never returned")
		return nil
	}
}

// loseReply runs write, through the proxied Session, so that its request
// reaches the server and its reply is lost with the connection: the link
// is slowed by delay and cut as soon as the observer sees the node at path
// change. It reports whether that happened (write saw the connection drop;
// on a machine slower than the delay the reply gets through first) and
// what write returned.
func loseReply(t *testing.T, ctx context.Context, p *zktest.Proxy, observer *zkcoord.Session, path string, delay time.Duration, write func() error) (lost bool, err error) {
	t.Helper()
	unknown := hookUnknown(t)
	_, _, changed, err := observer.ExistsW(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Delay(delay); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	select {
	case <-changed: // committed; the reply is still in the slowed link
	case err := <-done:
		heal(t, p)
		return false, err
	case <-ctx.Done():
		t.Fatal("the write never reached the server")
	}
	if err := p.Cut(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-unknown:
	case err := <-done:
		heal(t, p)
		return false, err
	case <-ctx.Done():
		t.Fatal("the write never noticed the cut")
	}
	heal(t, p)
	return true, await(t, ctx, done)
}

// loseRequest runs write, through the proxied Session, so that its request
// never reaches the server: the proxy resets the connection on the next
// data it carries and drops that data. It reports whether that happened and
// what write returned.
func loseRequest(t *testing.T, ctx context.Context, p *zktest.Proxy, observer *zkcoord.Session, path string, write func() error) (lost bool, err error) {
	t.Helper()
	unknown := hookUnknown(t)
	_, before, err := observer.Exists(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ResetPeer(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	select {
	case <-unknown:
	case err := <-done:
		heal(t, p)
		return false, err
	case <-ctx.Done():
		t.Fatal("the write never noticed the reset")
	}
	if _, st, err := observer.Exists(ctx, path); err != nil || st.Mzxid != before.Mzxid {
		t.Fatalf("the dropped request changed %s: %+v, %v", path, st, err)
	}
	heal(t, p)
	return true, await(t, ctx, done)
}

// untilLost runs scenario with longer and longer delays until the fault
// happened.
func untilLost(t *testing.T, scenario func(delay time.Duration) bool) {
	t.Helper()
	for _, d := range []time.Duration{time.Second, 3 * time.Second, 8 * time.Second} {
		if scenario(d) {
			return
		}
		t.Logf("the reply arrived despite a %v delay; trying a longer one", d)
	}
	t.Fatal("the reply was never lost: the fault was not exercised")
}

// A Set whose reply is lost is found to have happened: it reports the
// version it wrote, and the node was written once.
func TestSetWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	untilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/set-%v", delay)
		v0, err := mustNode(t, observer, path).Create(ctx, []byte("a"))
		if err != nil {
			t.Fatal(err)
		}
		n, got := mustNode(t, sess, path), Version{}
		lost, err := loseReply(t, ctx, p, observer, path, delay, func() (err error) {
			got, err = n.Set(ctx, []byte("b"), v0.Version)
			return err
		})
		if err != nil {
			t.Fatalf("Set with a lost reply: %v", err)
		}
		cur, err := mustNode(t, observer, path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Data) != "b" || got.Version != v0.Version+1 || cur.Version != got.Version || string(cur.Data) != "b" {
			t.Fatalf("Set returned %+v, node is %+v; want b at version %d, written once", got, cur, v0.Version+1)
		}
		return lost
	})
}

// A Set with AnyVersion whose reply is lost is sent again; the node ends up
// with the data, at the version Set reports.
func TestSetAnyVersionWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	untilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/any-%v", delay)
		if _, err := mustNode(t, observer, path).Create(ctx, []byte("a")); err != nil {
			t.Fatal(err)
		}
		n, got := mustNode(t, sess, path), Version{}
		lost, err := loseReply(t, ctx, p, observer, path, delay, func() (err error) {
			got, err = n.Set(ctx, []byte("b"), AnyVersion)
			return err
		})
		if err != nil {
			t.Fatalf("Set with a lost reply: %v", err)
		}
		cur, err := mustNode(t, observer, path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Data) != "b" || string(cur.Data) != "b" || got.Version != cur.Version {
			t.Fatalf("Set returned %+v, node is %+v; want b at the version returned", got, cur)
		}
		return lost
	})
}

// A Create whose reply is lost is found to have happened: it returns the
// node's first version rather than ErrExists.
func TestCreateWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	if err := observer.EnsurePath(ctx, "/app"); err != nil {
		t.Fatal(err)
	}
	untilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/app/create-%v", delay)
		n, got := mustNode(t, sess, path), Version{}
		lost, err := loseReply(t, ctx, p, observer, path, delay, func() (err error) {
			got, err = n.Create(ctx, []byte("a"))
			return err
		})
		if err != nil {
			t.Fatalf("Create with a lost reply: %v", err)
		}
		cur, err := mustNode(t, observer, path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 0 || string(got.Data) != "a" || cur.Version != 0 || string(cur.Data) != "a" {
			t.Fatalf("Create returned %+v, node is %+v; want a at version 0", got, cur)
		}
		return lost
	})
}

// A Set whose request never reached the server is sent again once
// reconnected, and succeeds.
func TestSetWhoseRequestIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	for attempt := 1; ; attempt++ {
		path := fmt.Sprintf("/req-%d", attempt)
		v0, err := mustNode(t, observer, path).Create(ctx, []byte("a"))
		if err != nil {
			t.Fatal(err)
		}
		n, got := mustNode(t, sess, path), Version{}
		lost, err := loseRequest(t, ctx, p, observer, path, func() (err error) {
			got, err = n.Set(ctx, []byte("b"), v0.Version)
			return err
		})
		if err != nil {
			t.Fatalf("Set with a lost request: %v", err)
		}
		cur, err := mustNode(t, observer, path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != v0.Version+1 || cur.Version != got.Version || string(cur.Data) != "b" {
			t.Fatalf("Set returned %+v, node is %+v; want b at version %d", got, cur, v0.Version+1)
		}
		if lost {
			return
		}
		if attempt == 3 {
			t.Fatal("the request was never lost: the fault was not exercised")
		}
	}
}

func mustNode(t *testing.T, sess *zkcoord.Session, path string) *Node {
	t.Helper()
	n, err := New(sess, path)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
