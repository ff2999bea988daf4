package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func newWork(t *testing.T, sess *zkcoord.Session) *WorkQueue {
	t.Helper()
	q, err := NewWork(sess, "/work")
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func take(t *testing.T, ctx context.Context, q *WorkQueue) *Claim {
	t.Helper()
	c, err := q.Take(ctx)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	return c
}

// Items come out by priority, then in the order they were put; an
// acknowledged item is gone, a released one comes back.
func TestWorkQueueOrderAckRelease(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	q := newWork(t, connect(t))
	for _, it := range []struct {
		data string
		prio int
	}{{"b1", 100}, {"a1", 10}, {"b2", 100}, {"a2", 10}} {
		if err := q.Put(ctx, []byte(it.data), it.prio); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Put(ctx, nil, 1000); !errors.Is(err, ErrPriority) {
		t.Fatalf("Put with priority 1000 = %v", err)
	}
	var got []string
	for range 4 {
		c := take(t, ctx, q)
		got = append(got, string(c.Data()))
		if err := c.Ack(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.Ack(ctx); err == nil {
			t.Fatal("a second Ack succeeded")
		}
	}
	if fmt.Sprint(got) != "[a1 a2 b1 b2]" {
		t.Fatalf("served %v", got)
	}
	if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake on an empty queue = %v", err)
	}
	if err := q.Put(ctx, []byte("x"), DefaultWorkPriority); err != nil {
		t.Fatal(err)
	}
	c := take(t, ctx, q)
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if again := take(t, ctx, q); string(again.Data()) != "x" {
		t.Fatalf("after Release, Take = %q", again.Data())
	} else if err := again.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v", n, err)
	}
}

// A consumer that dies before acknowledging loses nothing: its item is
// taken by another consumer once its Session is gone.
func TestWorkQueueDeadConsumer(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	dying := connect(t)
	q1 := newWork(t, dying)
	if err := q1.Put(ctx, []byte("job"), DefaultWorkPriority); err != nil {
		t.Fatal(err)
	}
	c := take(t, ctx, q1)
	q2 := newWork(t, connect(t))
	if _, err := q2.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("a claimed item was visible to another consumer: %v", err)
	}
	waiting := make(chan *Claim, 1)
	go func() {
		c2, err := q2.Take(ctx)
		if err != nil {
			t.Errorf("Take: %v", err)
		}
		waiting <- c2
	}()
	if err := dying.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if err := c.Ack(ctx); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("Ack after the Session ended = %v; want ErrClaimLost", err)
	}
	c2 := <-waiting
	if c2 == nil || string(c2.Data()) != "job" {
		t.Fatalf("the other consumer got %v", c2)
	}
	if err := c2.Ack(ctx); err != nil {
		t.Fatal(err)
	}
}

// Many consumers: every item is acknowledged exactly once.
func TestWorkQueueConcurrentConsumers(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const items, consumers = 60, 4
	q := newWork(t, connect(t))
	for i := range items {
		if err := q.Put(ctx, []byte(fmt.Sprint(i)), DefaultWorkPriority); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu    sync.Mutex
		acked = map[string]int{}
		wg    sync.WaitGroup
	)
	for range consumers {
		cq := newWork(t, connect(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := cq.TryTake(ctx)
				if errors.Is(err, ErrEmpty) {
					return
				}
				if err != nil {
					t.Errorf("TryTake: %v", err)
					return
				}
				if err := c.Ack(ctx); err != nil {
					t.Errorf("Ack: %v", err)
					return
				}
				mu.Lock()
				acked[string(c.Data())]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(acked) != items {
		t.Fatalf("%d distinct items acknowledged; want %d", len(acked), items)
	}
	for item, n := range acked {
		if n != 1 {
			t.Fatalf("item %s acknowledged %d times", item, n)
		}
	}
}

// Children that are not entries, and corrupt paths, are refused or ignored.
func TestWorkQueueForeignEntries(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	q := newWork(t, sess)
	if err := q.Put(ctx, []byte("real"), 5); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Create(ctx, "/work/entries/not-an-entry", []byte("foreign"), 0); err != nil {
		t.Fatal(err)
	}
	c := take(t, ctx, q)
	if string(c.Data()) != "real" {
		t.Fatalf("Take = %q", c.Data())
	}
	if err := c.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake with only a foreign child = %v", err)
	}
	if _, err := NewWork(nil, "/x"); !errors.Is(err, zkcoord.ErrNilSession) {
		t.Fatalf("NewWork(nil) = %v", err)
	}
}
