package queue

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// hooks installs the take hooks for one test.
func hooks(t *testing.T, commit func(string), resolved func(outcome)) {
	testHookCommit, testHookResolved = commit, resolved
	t.Cleanup(func() { testHookCommit, testHookResolved = nil, nil })
}

// throughProxy connects a session whose traffic goes through a fault proxy.
func throughProxy(t *testing.T, timeout time.Duration) (*zkcoord.Session, interface {
	Delay(time.Duration) error
	Cut() error
	Blackhole() error
	Heal() error
}) {
	p := cluster.NewProxy(t)
	sess := connect(t, func(c *zkcoord.Config) {
		c.Servers = p.Servers()
		c.SessionTimeout = timeout
	})
	return sess, p
}

// The taker's delete commits but its reply is lost with the connection. The
// taker still gets the item, and nobody else does.
//
// The reply is lost by slowing the taker's link and cutting it as soon as
// an observer sees the delete. If the observer is slower than the delay
// (a very loaded machine), the reply arrives and the fault is not
// exercised; the scenario is then repeated with a longer delay.
func TestTakeWhoseReplyIsLostStillDelivers(t *testing.T) {
	for _, delay := range []time.Duration{2 * time.Second, 5 * time.Second, 10 * time.Second} {
		if replyLost(t, delay) {
			return
		}
		t.Logf("the reply arrived despite a %v delay; trying a longer one", delay)
	}
	t.Fatal("the reply was never lost: the fault was not exercised")
}

func replyLost(t *testing.T, delay time.Duration) (exercised bool) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	partitioned, proxy := throughProxy(t, 60*time.Second)
	observer := connect(t)
	a, _ := New(partitioned, "/q")
	b, _ := New(connect(t), "/q")
	// The taker's multi must not fail for want of the claims node.
	if err := observer.EnsurePath(ctx, "/q/claims"); err != nil {
		t.Fatal(err)
	}
	mustPut(t, ctx, b, "x")

	var (
		once     sync.Once
		resolved = make(chan outcome, 1)
		faulted  = make(chan error, 1)
	)
	hooks(t, func(itemPath string) {
		once.Do(func() {
			// Watch the item from outside, then slow the taker's link so
			// that its delete arrives late and its reply later still.
			_, _, w, err := observer.GetW(ctx, itemPath)
			if err != nil {
				t.Fatalf("watch %s: %v", itemPath, err)
			}
			if err := proxy.Delay(delay); err != nil {
				t.Fatal(err)
			}
			go func() {
				select {
				case <-w: // the delete has committed; the reply is on its way
				case <-ctx.Done():
					faulted <- ctx.Err()
					return
				}
				if err := proxy.Cut(); err != nil {
					faulted <- err
					return
				}
				// Before the taker finds out, the item is not available to
				// anyone else.
				if _, err := b.TryTake(ctx); !errors.Is(err, ErrEmpty) {
					faulted <- errors.New("another taker got the item or failed: " + errString(err))
					return
				}
				faulted <- proxy.Heal()
			}()
		})
	}, func(o outcome) { resolved <- o })

	d, err := a.Take(ctx)
	if err != nil || string(d) != "x" {
		t.Fatalf("Take = %q, %v; want x", d, err)
	}
	if err := <-faulted; err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-resolved:
		if o != ours {
			t.Fatalf("resolved outcome = %v; want ours", o)
		}
	default:
		return false
	}
	if _, err := b.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake afterwards = %v; want ErrEmpty", err)
	}
	c, _, err := observer.Children(ctx, "/q/claims")
	c = slices.DeleteFunc(c, isReceipt) // a Put's receipt may not be deleted yet
	if err != nil || len(c) > 0 {
		t.Fatalf("claim markers after the take: %v, %v", c, err)
	}
	return true
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// The taker's delete never reaches the server; meanwhile another taker
// gets the item. The first taker must not return it as well.
func TestTakeWhoseRequestIsLostYieldsToAnotherTaker(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	partitioned, proxy := throughProxy(t, 30*time.Second)
	a, _ := New(partitioned, "/q")
	b, _ := New(connect(t), "/q")
	mustPut(t, ctx, b, "x")

	var (
		once     sync.Once
		resolved = make(chan outcome, 1)
		other    = make(chan string, 1)
	)
	hooks(t, func(string) {
		once.Do(func() {
			if err := proxy.Blackhole(); err != nil {
				t.Fatal(err)
			}
			go func() {
				d, err := b.Take(ctx)
				if err != nil {
					other <- "error: " + err.Error()
					return
				}
				other <- string(d)
				// Reconnect the first taker, then give it another item.
				if err := proxy.Heal(); err != nil {
					return
				}
				_, _ = b.Put(ctx, []byte("y"))
			}()
		})
	}, func(o outcome) { resolved <- o })

	d, err := a.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := <-other; got != "x" {
		t.Fatalf("other taker got %q; want x", got)
	}
	if string(d) != "y" {
		t.Fatalf("partitioned taker got %q; want y", d)
	}
	select {
	case o := <-resolved:
		if o != theirs {
			t.Fatalf("resolved outcome = %v; want theirs", o)
		}
	default:
		t.Fatal("the request was not lost: the fault was not exercised")
	}
}

// The taker's session is lost while its delete is in flight: Take says the
// outcome is unknown. Here the delete never arrived, so the item is still
// there for another taker.
func TestTakeOnLostSessionReportsUnknownOutcome(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	partitioned, proxy := throughProxy(t, 4*time.Second)
	a, _ := New(partitioned, "/q")
	b, _ := New(connect(t), "/q")
	mustPut(t, ctx, b, "x")
	var once sync.Once
	hooks(t, func(string) {
		once.Do(func() {
			if err := proxy.Blackhole(); err != nil {
				t.Fatal(err)
			}
		})
	}, nil)
	_, err := a.Take(ctx)
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, zkcoord.ErrSessionLost) {
		t.Fatalf("Take = %v; want ErrOutcomeUnknown and ErrSessionLost", err)
	}
	if d, err := b.TryTake(ctx); err != nil || string(d) != "x" {
		t.Fatalf("TryTake by another taker = %q, %v; want x", d, err)
	}
}

// A Put whose create commits and whose reply is lost with the connection,
// and whose item another client takes before the putter is connected
// again: the Put must not add the item a second time.
func TestPutWhoseReplyIsLostAndItemTakenAddsOnce(t *testing.T) {
	n := 0
	testkit.UntilLost(t, func(delay time.Duration) bool {
		n++
		return putLostThenTaken(t, fmt.Sprintf("/q%d", n), delay)
	})
}

func putLostThenTaken(t *testing.T, path string, delay time.Duration) (exercised bool) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	putter, proxy := throughProxy(t, testkit.SessionTimeout)
	observer := connect(t)
	p, _ := New(putter, path)
	taker, _ := New(observer, path)
	if err := observer.EnsurePath(ctx, path+"/claims"); err != nil {
		t.Fatal(err)
	}
	_, _, added, err := observer.ChildrenW(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	unknown := testkit.Signal(t, &testHookPutUnknown)
	if err := proxy.Delay(delay); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Put(ctx, []byte("once"))
		done <- err
	}()
	// Once committed, the reply is still in the slowed link.
	if returned(t, ctx, proxy, added, done) {
		return false
	}
	// Someone takes the item before the putter hears of it.
	if data, err := taker.TryTake(ctx); err != nil || string(data) != "once" {
		t.Fatalf("TryTake: %q, %v", data, err)
	}
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	// The putter sees the connection drop, unless the reply got through
	// before the cut.
	if returned(t, ctx, proxy, unknown, done) {
		return false
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Put: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Put never returned")
	}
	if data, err := taker.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("the item was added twice: TryTake gave %q, %v", data, err)
	}
	testkit.WaitFor(t, time.Minute, "the put's receipt deleted", func() error {
		c, _, err := observer.Children(ctx, path+"/claims")
		if err == nil && slices.ContainsFunc(c, isReceipt) {
			return fmt.Errorf("%w: %v", testkit.ErrNotYet, c)
		}
		return err
	})
	return true
}
