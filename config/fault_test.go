package config

import (
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

// A Set whose reply is lost is found to have happened: it reports the
// version it wrote, and the node was written once.
func TestSetWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/set-%v", delay)
		v0, err := mustNode(t, observer, path).Create(ctx, []byte("a"))
		if err != nil {
			t.Fatal(err)
		}
		n, got := mustNode(t, sess, path), Version{}
		lost, err := testkit.LoseReply(t, ctx, p, observer, path, delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
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
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/any-%v", delay)
		if _, err := mustNode(t, observer, path).Create(ctx, []byte("a")); err != nil {
			t.Fatal(err)
		}
		n, got := mustNode(t, sess, path), Version{}
		lost, err := testkit.LoseReply(t, ctx, p, observer, path, delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
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
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/app/create-%v", delay)
		n, got := mustNode(t, sess, path), Version{}
		lost, err := testkit.LoseReply(t, ctx, p, observer, path, delay, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
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
		lost, err := testkit.LoseRequest(t, ctx, p, observer, path, testkit.Signal(t, &testHookOutcomeUnknown), func() (err error) {
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
