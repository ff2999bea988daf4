package config

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// throughProxy connects a Session whose traffic goes through a fault proxy.
func throughProxy(t *testing.T) (*zkcoord.Session, *zktest.Proxy) {
	p := cluster.NewProxy(t)
	return connect(t, func(c *zkcoord.Config) { c.Servers = p.Servers() }), p
}

// A Set whose reply is lost, its write applied, cannot know the write was
// its own (another writer may have written the same data at the same
// version): it fails with ErrOutcomeUnknown, and the node was written once.
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
		if lost && !errors.Is(err, zkcoord.ErrOutcomeUnknown) {
			t.Fatalf("Set with a lost reply = %+v, %v; want ErrOutcomeUnknown", got, err)
		}
		cur, err := mustNode(t, observer, path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Version != v0.Version+1 || string(cur.Data) != "b" {
			t.Fatalf("node is %+v; want b at version %d, written once", cur, v0.Version+1)
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

// A Create whose reply is lost, its create applied, cannot know the node
// is its own (another creator may have written the same data): it fails
// with ErrOutcomeUnknown rather than ErrExists or success.
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
		if lost && !errors.Is(err, zkcoord.ErrOutcomeUnknown) {
			t.Fatalf("Create with a lost reply = %+v, %v; want ErrOutcomeUnknown", got, err)
		}
		cur, err := mustNode(t, observer, path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Version != 0 || string(cur.Data) != "a" {
			t.Fatalf("node is %+v; want a at version 0", cur)
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

// throughFault connects a Session whose socket writes can be made to fail.
func throughFault(t *testing.T) (*zkcoord.Session, *testkit.WriteFault) {
	f := new(testkit.WriteFault)
	return connect(t, func(c *zkcoord.Config) { c.Dialer = f.Dial }), f
}

// whileUnknown makes do run, once, when a write of this package has lost
// its connection and not yet looked at the node.
func whileUnknown(t *testing.T, do func()) {
	var once sync.Once
	testHookOutcomeUnknown = func() { once.Do(do) }
	t.Cleanup(func() { testHookOutcomeUnknown = nil })
}

// Two writers that Set the same data at the same version never both
// succeed. A's write is lost with its connection; before A looks, B writes
// the same data at that version. A cannot tell B's write from its own: it
// fails with ErrOutcomeUnknown rather than report B's write as its own.
func TestSetNeverTakesAnotherWritersEqualWriteForItsOwn(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess, f := throughFault(t)
	other := connect(t)
	v0, err := mustNode(t, other, "/equal").Create(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	var bErr error
	whileUnknown(t, func() { _, bErr = mustNode(t, other, "/equal").Set(ctx, []byte("b"), v0.Version) })
	hit := f.FailNext(testkit.OpSetData, "/equal")
	_, aErr := mustNode(t, sess, "/equal").Set(ctx, []byte("b"), v0.Version)
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the fault was not exercised")
	}
	if bErr != nil {
		t.Fatalf("B's Set: %v", bErr)
	}
	if !errors.Is(aErr, zkcoord.ErrOutcomeUnknown) || zkcoord.IsRetryable(aErr) {
		t.Fatalf("A's Set = %v; want ErrOutcomeUnknown, not retryable (both writers told they won version %d)", aErr, v0.Version+1)
	}
}

// Two Updates that both read version V and compute the same data never
// both succeed when the node moved one version only.
func TestUpdateIsNeverLostToAnEqualWrite(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess, f := throughFault(t)
	other := connect(t)
	if _, err := mustNode(t, other, "/update").Create(ctx, []byte("1")); err != nil {
		t.Fatal(err)
	}
	incr := func(cur Version) ([]byte, error) { return []byte(fmt.Sprint(len(cur.Data) + 1)), nil }
	var bErr error
	whileUnknown(t, func() { _, bErr = mustNode(t, other, "/update").Update(ctx, incr) })
	hit := f.FailNext(testkit.OpSetData, "/update")
	_, aErr := mustNode(t, sess, "/update").Update(ctx, incr)
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the fault was not exercised")
	}
	if bErr != nil {
		t.Fatalf("B's Update: %v", bErr)
	}
	cur, err := mustNode(t, other, "/update").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if aErr == nil && cur.Version == 1 {
		t.Fatalf("both Updates succeeded, the node is at version %d: one update lost", cur.Version)
	}
	if !errors.Is(aErr, zkcoord.ErrOutcomeUnknown) {
		t.Fatalf("A's Update = %v; want ErrOutcomeUnknown", aErr)
	}
}

// Two creators of the same data never both believe they created the node:
// Create and CompareAndSet on a missing node.
func TestCreateNeverTakesAnotherCreatorsNodeForItsOwn(t *testing.T) {
	for _, c := range []struct {
		name   string
		create func(ctx context.Context, n *Node) error
	}{
		{"Create", func(ctx context.Context, n *Node) error { _, err := n.Create(ctx, []byte("x")); return err }},
		{"CompareAndSet", func(ctx context.Context, n *Node) error {
			ok, _, err := n.CompareAndSet(ctx, nil, []byte("x"))
			if err == nil && !ok {
				return ErrConflict
			}
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testkit.Ctx(t, time.Minute)
			sess, f := throughFault(t)
			other := connect(t)
			if err := other.EnsurePath(ctx, "/app"); err != nil {
				t.Fatal(err)
			}
			var bErr error
			whileUnknown(t, func() { bErr = c.create(ctx, mustNode(t, other, "/app/x")) })
			hit := f.FailNext(testkit.OpCreate, "/app/x")
			aErr := c.create(ctx, mustNode(t, sess, "/app/x"))
			select {
			case <-hit:
			default:
				t.Fatal("no write failed: the fault was not exercised")
			}
			if bErr != nil {
				t.Fatalf("B's %s: %v", c.name, bErr)
			}
			if !errors.Is(aErr, zkcoord.ErrOutcomeUnknown) {
				t.Fatalf("A's %s = %v; want ErrOutcomeUnknown (both told they created the node)", c.name, aErr)
			}
		})
	}
}

// A Delete whose reply is lost never deletes the node someone created again
// at the same path, at the version it expected, meanwhile.
func TestDeleteWhoseReplyIsLostSparesTheNodeCreatedAgain(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, p := throughProxy(t)
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/del-%v", delay)
		v0, err := mustNode(t, observer, path).Create(ctx, []byte("old"))
		if err != nil {
			t.Fatal(err)
		}
		unknown := make(chan struct{})
		var again Version
		whileUnknown(t, func() {
			again, err = mustNode(t, observer, path).Create(ctx, []byte("new"))
			close(unknown)
		})
		lost, derr := testkit.LoseReply(t, ctx, p, observer, path, delay, unknown, func() error {
			return mustNode(t, sess, path).Delete(ctx, v0.Version)
		})
		if !lost {
			return false
		}
		if err != nil {
			t.Fatalf("creating the node again: %v", err)
		}
		if derr != nil {
			t.Fatalf("Delete with a lost reply: %v", derr)
		}
		cur, err := mustNode(t, observer, path).Get(ctx)
		if err != nil || string(cur.Data) != "new" || cur.Zxid != again.Zxid {
			t.Fatalf("after the Delete the node is %+v, %v; want the one created again (%+v)", cur, err, again)
		}
		return true
	})
}

// A Create whose request never reached the server finds no node once
// reconnected: it did not happen, and is sent again.
func TestCreateWhoseRequestIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess, f := throughFault(t)
	if err := sess.EnsurePath(ctx, "/app"); err != nil {
		t.Fatal(err)
	}
	hit := f.FailNext(testkit.OpCreate, "/app/lost")
	got, err := mustNode(t, sess, "/app/lost").Create(ctx, []byte("a"))
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the fault was not exercised")
	}
	if err != nil || got.Version != 0 || string(got.Data) != "a" {
		t.Fatalf("Create with a lost request = %+v, %v; want a at version 0", got, err)
	}
}

// A Delete whose request never reached the server finds the node it meant
// still there once reconnected, and is sent again.
func TestDeleteWhoseRequestIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess, f := throughFault(t)
	n := mustNode(t, sess, "/gone")
	v0, err := n.Create(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	hit := f.FailNext(testkit.OpDelete, "/gone")
	err = n.Delete(ctx, v0.Version)
	select {
	case <-hit:
	default:
		t.Fatal("no write failed: the fault was not exercised")
	}
	if err != nil {
		t.Fatalf("Delete with a lost request: %v", err)
	}
	if _, err := n.Get(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the Delete, Get = %v; want ErrNotFound", err)
	}
}
