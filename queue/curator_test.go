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

func mustTake(t *testing.T, ctx context.Context, q curatorTaker, want string) {
	t.Helper()
	items, err := q.Take(ctx)
	if err != nil || joined(items) != want {
		t.Fatalf("Take = %q, %v; want %q", joined(items), err, want)
	}
}

func TestCuratorQueueOrderAndBatches(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	for _, m := range curatorModes {
		t.Run(m.name, func(t *testing.T) {
			sess := connect(t)
			var opts []Option
			if m.lock {
				opts = append(opts, WithLockPath("/locks/jobs"))
			}
			q, err := NewCurator(sess, "/deep/jobs", opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
				t.Fatalf("TryTake on a missing queue = %v; want ErrEmpty", err)
			}
			if n, err := q.Len(ctx); err != nil || n != 0 {
				t.Fatalf("Len of a missing queue = %d, %v", n, err)
			}
			if err := q.PutMulti(ctx, nil); !errors.Is(err, ErrBatch) {
				t.Fatalf("PutMulti of nothing = %v; want ErrBatch", err)
			}
			if err := q.Put(ctx, []byte("a")); err != nil {
				t.Fatal(err)
			}
			if err := q.PutMulti(ctx, bytesOf("b,c,d")); err != nil {
				t.Fatal(err)
			}
			if err := q.Put(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if n, err := q.Len(ctx); err != nil || n != 3 {
				t.Fatalf("Len = %d, %v; want 3 nodes", n, err)
			}
			mustTake(t, ctx, q, "a")
			mustTake(t, ctx, q, "b,c,d")
			mustTake(t, ctx, q, "")
			if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
				t.Fatalf("TryTake on an empty queue = %v; want ErrEmpty", err)
			}
			// The queue node stays, as Curator's does: it is persistent.
			if ok, _, err := sess.Exists(ctx, "/deep/jobs"); err != nil || !ok {
				t.Fatalf("the queue node after the last take: %v, %v", ok, err)
			}
			if _, err := q.TryClaim(ctx); m.lock != !errors.Is(err, ErrNoLockPath) {
				t.Fatalf("TryClaim = %v (lock path %v)", err, m.lock)
			}
		})
	}
}

func TestCuratorArgumentsRefused(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	if _, err := NewCurator(sess, "/q", WithLockPath("/q")); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("lock path = queue path: %v; want ErrInvalidPath", err)
	}
	if _, err := NewCuratorID(sess, "/q", WithLockPath("relative")); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("relative lock path: %v; want ErrInvalidPath", err)
	}
	id, _ := NewCuratorID(sess, "/ids")
	if err := id.Put(ctx, "", []byte("x")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Put with an empty id = %v; want ErrInvalid", err)
	}
	delay, _ := NewCuratorDelay(sess, "/later")
	if err := delay.Put(ctx, time.UnixMilli(0), []byte("x")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Put due at the epoch = %v; want ErrInvalid", err)
	}
	if n, err := id.Len(ctx); err != nil || n != 0 {
		t.Fatalf("refused puts added %d items (%v)", n, err)
	}
}

// A node with an item's name but not Curator's framing is never dropped
// silently: Take takes it and hands its data over in a CorruptError;
// Claim holds it for the caller to acknowledge or release.
func TestCuratorCorruptItem(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	for _, m := range curatorModes {
		t.Run(m.name, func(t *testing.T) {
			sess := connect(t)
			var opts []Option
			if m.lock {
				opts = append(opts, WithLockPath("/locks"))
			}
			q, _ := NewCurator(sess, "/q", opts...)
			if err := q.Put(ctx, []byte("first")); err != nil {
				t.Fatal(err)
			}
			bad, err := sess.Create(ctx, "/q/queue-", []byte("not framed"), zkcoord.FlagSequence)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Put(ctx, []byte("after")); err != nil {
				t.Fatal(err)
			}
			mustTake(t, ctx, q, "first")
			if m.lock {
				// Another consumer claims it and gives it back.
				holder, _ := NewCurator(connect(t), "/q", opts...)
				_, err := holder.Claim(ctx)
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Claim == nil || ce.Path != bad || string(ce.Data) != "not framed" {
					t.Fatalf("Claim of the corrupt node = %v; want a CorruptError with its claim", err)
				}
				if err := ce.Claim.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if n, _ := q.Len(ctx); n != 2 {
					t.Fatalf("Len after releasing the corrupt node = %d; want 2", n)
				}
			}
			_, err = q.Take(ctx)
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, zkcoord.ErrBadData) || ce.Path != bad || string(ce.Data) != "not framed" || ce.Claim != nil {
				t.Fatalf("Take of the corrupt node = %v; want a CorruptError with its data", err)
			}
			if ok, _, err := sess.Exists(ctx, bad); err != nil || ok {
				t.Fatalf("the corrupt node after its take: %v, %v; want gone", ok, err)
			}
			mustTake(t, ctx, q, "after")
		})
	}
}

// Children that are not items are left alone, as Curator leaves them.
func TestCuratorForeignChildrenLeftAlone(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	q, _ := NewCurator(sess, "/q")
	if err := q.Put(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/q/other", "/q/_c_0f7e2fae-7e5f-4b9c-9c33-1a0f9d6d1f11-queue-0000000001"} {
		if _, err := sess.Create(ctx, p, []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := q.Len(ctx); err != nil || n != 1 {
		t.Fatalf("Len = %d, %v; want 1", n, err)
	}
	mustTake(t, ctx, q, "a")
	if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake with only foreign children = %v; want ErrEmpty", err)
	}
	if c, _, err := sess.Children(ctx, "/q"); err != nil || len(c) != 2 {
		t.Fatalf("children after the takes: %v, %v; want the two foreign ones", c, err)
	}
}

// Go takers, taking and claiming, each get every item exactly once.
func TestCuratorConcurrentTakers(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	for _, m := range curatorModes {
		t.Run(m.name, func(t *testing.T) {
			var opts []Option
			if m.lock {
				opts = append(opts, WithLockPath("/locks"))
			}
			const n, takers = 200, 4
			q, _ := NewCuratorPriority(connect(t), "/q", opts...)
			for i := range n {
				if err := q.Put(ctx, int32(i%3), []byte(fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
			}
			var (
				mu   sync.Mutex
				seen = map[string]int{}
				wg   sync.WaitGroup
				errs = make(chan error, takers)
			)
			for k := range takers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tq, _ := NewCuratorPriority(connect(t), "/q", opts...)
					for {
						var items [][]byte
						var err error
						if m.lock && k%2 == 1 {
							var c *Claim
							if c, err = tq.TryClaim(ctx); err == nil {
								items, err = c.Items(), c.Ack(ctx)
							}
						} else {
							items, err = tq.TryTake(ctx)
						}
						if errors.Is(err, ErrEmpty) {
							return
						}
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						seen[joined(items)]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for i := range n {
				if c := seen[fmt.Sprint(i)]; c != 1 {
					t.Errorf("item %d taken %d times", i, c)
				}
			}
		})
	}
}

func TestCuratorTakeWaitsForPutAndDueTime(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	taker, _ := NewCuratorDelay(connect(t), "/not/yet") // the queue node does not exist yet
	putter, _ := NewCuratorDelay(connect(t), "/not/yet")
	type result struct {
		items string
		err   error
		at    time.Time
	}
	got := make(chan result, 1)
	go func() {
		items, err := taker.Take(ctx)
		got <- result{joined(items), err, time.Now()}
	}()
	if !notWithin(got, 300*time.Millisecond) {
		t.Fatal("Take returned from a missing queue")
	}
	due := time.Now().Add(time.Second)
	if err := putter.Put(ctx, due, []byte("later")); err != nil {
		t.Fatal(err)
	}
	if err := putter.Put(ctx, due.Add(time.Hour), []byte("much later")); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.items != "later" || r.at.Before(due.Truncate(time.Millisecond)) {
		t.Fatalf("Take = %q, %v at %v; want later, not before %v", r.items, r.err, r.at, due)
	}
	if n, err := taker.Len(ctx); err != nil || n != 1 {
		t.Fatalf("Len = %d, %v; want the item due in an hour", n, err)
	}
}

// A claim ends with its consumer's Session, and the item is taken again.
func TestCuratorClaimOfADeadConsumerIsTakenAgain(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	dying := connect(t)
	a, _ := NewCurator(dying, "/q", WithLockPath("/locks"))
	b, _ := NewCurator(connect(t), "/q", WithLockPath("/locks"))
	if err := a.Put(ctx, []byte("work")); err != nil {
		t.Fatal(err)
	}
	c, err := a.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryClaim(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryClaim of a held item = %v; want ErrEmpty", err)
	}
	got := make(chan string, 1)
	go func() {
		items, err := b.Take(ctx)
		got <- fmt.Sprint(joined(items), err)
	}()
	if err := dying.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if !errors.Is(c.Err(), ErrClaimLost) {
		t.Fatalf("claim's Err = %v; want ErrClaimLost", c.Err())
	}
	if r := <-got; r != "work<nil>" {
		t.Fatalf("the other consumer's Take = %s; want work", r)
	}
}

func TestCuratorIDQueueRemove(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	for _, m := range curatorModes {
		t.Run(m.name, func(t *testing.T) {
			var opts []Option
			if m.lock {
				opts = append(opts, WithLockPath("/locks"))
			}
			q, _ := NewCuratorID(connect(t), "/ids", opts...)
			for _, p := range []struct{ id, item string }{{"a/b", "1"}, {"c", "2"}, {"a_b", "3"}, {"c", "4"}} {
				if err := q.Put(ctx, p.id, []byte(p.item)); err != nil {
					t.Fatal(err)
				}
			}
			if m.lock {
				// An item a consumer holds is not removed.
				c, err := q.Claim(ctx)
				if err != nil || joined(c.Items()) != "1" {
					t.Fatalf("Claim = %v, %v", c, err)
				}
				if n, err := q.Remove(ctx, "a/b"); err != nil || n != 1 {
					t.Fatalf("Remove(a/b) with one held = %d, %v; want 1", n, err)
				}
				if err := c.Ack(ctx); err != nil {
					t.Fatal(err)
				}
			} else if n, err := q.Remove(ctx, "a/b"); err != nil || n != 2 {
				t.Fatalf("Remove(a/b) = %d, %v; want 2 (a_b is the same id)", n, err)
			}
			if n, err := q.Remove(ctx, "none"); err != nil || n != 0 {
				t.Fatalf("Remove(none) = %d, %v", n, err)
			}
			mustTake(t, ctx, q, "2")
			mustTake(t, ctx, q, "4")
		})
	}
}

func TestSimpleQueue(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	q, _ := NewSimple(sess, "/s")
	if _, err := q.Peek(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Peek on a missing queue = %v; want ErrEmpty", err)
	}
	for _, s := range []string{"1", "2", "3"} {
		if err := q.Put(ctx, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	c, _, err := sess.Children(ctx, "/s")
	slices.Sort(c)
	if err != nil || len(c) != 3 || c[0] != "qn-0000000000" {
		t.Fatalf("children %v, %v; want qn-<seq>", c, err)
	}
	if d, _, err := sess.Get(ctx, "/s/"+c[0]); err != nil || string(d) != "1" {
		t.Fatalf("the node holds %q, %v; want the item as it is", d, err)
	}
	if d, err := q.Peek(ctx); err != nil || string(d) != "1" {
		t.Fatalf("Peek = %q, %v", d, err)
	}
	for _, want := range []string{"1", "2", "3"} {
		if d, err := q.Take(ctx); err != nil || string(d) != want {
			t.Fatalf("Take = %q, %v; want %s", d, err, want)
		}
	}
	if d, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake = %q, %v; want ErrEmpty", d, err)
	}
}
