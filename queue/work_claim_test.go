package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// entryNames returns the work queue's entries, sorted.
func entryNames(t *testing.T, ctx context.Context, sess *zkcoord.Session, path string) []string {
	t.Helper()
	entries, _, err := sess.Children(ctx, path+"/entries")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(entries)
	return entries
}

// A TakeN whose context ends while its claim transaction is in flight
// returns the context's error. The transaction commits anyway; its claims
// must not outlive the TakeN that gave up on them: another consumer gets
// every item while the first consumer's Session is still alive.
func TestWorkQueueCancelledTakeLeavesNoClaim(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, proxy := throughProxy(t, testkit.SessionTimeout)
	observer := connect(t)
	q := newWork(t, sess)
	other := newWork(t, observer)
	for _, s := range []string{"x", "y", "z"} {
		if err := other.Put(ctx, []byte(s), DefaultWorkPriority); err != nil {
			t.Fatal(err)
		}
	}
	first := entryNames(t, ctx, observer, "/work")[0]
	_, _, claimed, err := observer.ExistsW(ctx, "/work/taken/"+first)
	if err != nil {
		t.Fatal(err)
	}
	// The claim's reply spends two seconds in the link: time enough to
	// cancel the take once its claim has committed.
	if err := proxy.Delay(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		cs, err := q.TakeN(tctx, 3)
		if err == nil {
			err = fmt.Errorf("TakeN returned %v", claimData(cs))
		}
		done <- err
	}()
	select {
	case <-claimed:
	case err := <-done:
		t.Fatalf("TakeN returned before its claim committed: %v", err)
	case <-ctx.Done():
		t.Fatal("the claim never committed")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("TakeN cancelled in flight = %v; want context.Canceled", err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	var got []string
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	for len(got) < 3 {
		cs, err := other.TakeN(wctx, 3)
		if err != nil {
			t.Fatalf("another consumer got only %v: %v (the cancelled take's claims %v)", got, err,
				children(ctx, observer, "/work/taken"))
		}
		for _, c := range cs {
			got = append(got, string(c.Data()))
			if err := c.Ack(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sess.Err() != nil {
		t.Fatalf("the first consumer's Session ended: %v", sess.Err())
	}
	if slices.Sort(got); fmt.Sprint(got) != "[x y z]" {
		t.Fatalf("another consumer got %v; want [x y z]", got)
	}
}

func children(ctx context.Context, sess *zkcoord.Session, path string) []string {
	c, _, err := sess.Children(ctx, path)
	if err != nil {
		return []string{err.Error()}
	}
	return c
}

// Two goroutines share one WorkQueue (and so one Session). The first one's
// claim transaction is lost on its way; meanwhile the second claims the
// item. When the first finds out what became of its transaction, it must
// see the claim as the other's, not its own: one item, one holder.
func TestWorkQueueGoroutinesNeverShareAClaim(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	proxy := cluster.NewProxy(t)
	sess := connect(t, func(c *zkcoord.Config) { c.Servers = proxy.Servers() })
	observer := connect(t)
	q := newWork(t, sess)
	producer := newWork(t, observer)
	for _, s := range []string{"w", "x"} {
		if err := producer.Put(ctx, []byte(s), DefaultWorkPriority); err != nil {
			t.Fatal(err)
		}
	}
	// The first take lists the queue; the next one goes straight to its
	// claim transaction.
	w := take(t, ctx, q)
	if err := w.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	x := entryNames(t, ctx, observer, "/work")[0]

	var (
		once    sync.Once
		unknown = make(chan struct{}, 1)
		hooked  = make(chan struct{})
		second  *Claim
		err2    error
	)
	testHookClaimUnknown = func() {
		once.Do(func() {
			unknown <- struct{}{}
			second, err2 = q.TryTake(ctx)
			close(hooked)
		})
	}
	t.Cleanup(func() { testHookClaimUnknown = nil })
	var firstClaim *Claim
	lost, err := testkit.LoseRequest(t, ctx, proxy, observer, "/work/taken/"+x, unknown, func() (err error) {
		firstClaim, err = q.TryTake(ctx)
		return err
	})
	if !lost {
		t.Fatal("the claim was not lost: the fault was not exercised")
	}
	select {
	case <-hooked:
	default:
		t.Fatal("the claim's outcome was never settled")
	}
	if err2 != nil || string(second.Data()) != "x" {
		t.Fatalf("the second goroutine's TryTake = %v, %v; want x", second, err2)
	}
	if err == nil {
		t.Fatalf("both goroutines hold %s (%q and %q)", x, firstClaim.Data(), second.Data())
	}
	if !errors.Is(err, ErrEmpty) {
		t.Fatalf("the first goroutine's TryTake = %v; want ErrEmpty", err)
	}
}

// An acknowledgement whose context ends while it is in flight, and which
// commits: Ack must not report that it failed, since the item is gone.
func TestWorkQueueAckCancelledInFlightReportsTheOutcome(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	sess, proxy := throughProxy(t, testkit.SessionTimeout)
	observer := connect(t)
	q := newWork(t, sess)
	if err := q.Put(ctx, []byte("x"), DefaultWorkPriority); err != nil {
		t.Fatal(err)
	}
	c := take(t, ctx, q)
	_, _, acked, err := observer.ExistsW(ctx, "/work/entries/"+c.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := proxy.Delay(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Ack(actx) }()
	select {
	case <-acked:
	case err := <-done:
		t.Fatalf("Ack returned before it committed: %v", err)
	case <-ctx.Done():
		t.Fatal("the acknowledgement never committed")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Ack that committed = %v; want nil", err)
	}
	if err := c.Err(); !errors.Is(err, errAcked) {
		t.Fatalf("claim's Err = %v; want acknowledged", err)
	}
}

// An acknowledgement whose reply is lost with the connection: Ack finds out
// from its claim that it committed.
func TestWorkQueueAckWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	proxy := cluster.NewProxy(t)
	sess := connect(t, func(c *zkcoord.Config) { c.Servers = proxy.Servers() })
	observer := connect(t)
	n := 0
	testkit.UntilLost(t, func(delay time.Duration) bool {
		n++
		q, _ := NewWork(sess, fmt.Sprintf("/ack%d", n))
		if err := q.Put(ctx, []byte("x"), DefaultWorkPriority); err != nil {
			t.Fatal(err)
		}
		c := take(t, ctx, q)
		lost, err := testkit.LoseReply(t, ctx, proxy, observer, fmt.Sprintf("/ack%d/entries/%s", n, c.Name()), delay,
			testkit.Signal(t, &testHookAckUnknown), func() error { return c.Ack(ctx) })
		if err != nil {
			t.Fatalf("Ack with a lost reply = %v; want nil", err)
		}
		if l, err := q.Len(ctx); err != nil || l != 0 {
			t.Fatalf("Len = %d, %v; want 0", l, err)
		}
		return lost
	})
}
