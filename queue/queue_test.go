package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func notWithin[T any](ch <-chan T, d time.Duration) bool {
	select {
	case <-ch:
		return false
	case <-time.After(d):
		return true
	}
}

func mustPut(t *testing.T, ctx context.Context, q *Queue, s string) {
	t.Helper()
	if _, err := q.Put(ctx, []byte(s)); err != nil {
		t.Fatalf("Put(%q): %v", s, err)
	}
}

func TestFIFOOrder(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	q, err := New(connect(t), "/jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake on a missing queue = %v; want ErrEmpty", err)
	}
	if n, err := q.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len of a missing queue = %d, %v", n, err)
	}
	for i := range 5 {
		mustPut(t, ctx, q, fmt.Sprint("job", i))
	}
	if n, err := q.Len(ctx); err != nil || n != 5 {
		t.Fatalf("Len = %d, %v; want 5", n, err)
	}
	if d, err := q.Peek(ctx); err != nil || string(d) != "job0" {
		t.Fatalf("Peek = %q, %v; want job0", d, err)
	}
	for i := range 5 {
		d, err := q.Take(ctx)
		if err != nil || string(d) != fmt.Sprint("job", i) {
			t.Fatalf("Take = %q, %v; want job%d", d, err, i)
		}
	}
	if _, err := q.Peek(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Peek on an empty queue = %v; want ErrEmpty", err)
	}
	if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake on an empty queue = %v; want ErrEmpty", err)
	}
}

func TestTakeBlocksUntilPut(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	taker, _ := New(connect(t), "/later/queue") // the queue node does not exist yet
	putter, _ := New(connect(t), "/later/queue")
	got := make(chan string, 1)
	go func() {
		d, err := taker.Take(ctx)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(d)
	}()
	if !notWithin(got, 300*time.Millisecond) {
		t.Fatal("Take returned from an empty queue")
	}
	mustPut(t, ctx, putter, "hello")
	if d := <-got; d != "hello" {
		t.Fatalf("Take = %q; want hello", d)
	}
}

func TestTakeEndsWithContextAndSession(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	q, _ := New(sess, "/idle")
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := q.Take(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take = %v; want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := q.Take(ctx)
		done <- err
	}()
	if !notWithin(done, 200*time.Millisecond) {
		t.Fatal("Take returned from an empty queue")
	}
	sess.Close(ctx)
	if err := <-done; !errors.Is(err, zkcoord.ErrSessionClosed) {
		t.Fatalf("Take after Close = %v; want ErrSessionClosed", err)
	}
}

// Many takers in several sessions: every item is taken exactly once.
func TestConcurrentTakersTakeEachItemOnce(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const (
		items   = 200
		takers  = 9
		perSess = 3
	)
	producer, _ := New(connect(t), "/busy")
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
		errs = make(chan error, takers)
		q    *Queue
	)
	for i := range takers {
		if i%perSess == 0 {
			q, _ = New(connect(t), "/busy")
		}
		wg.Add(1)
		go func(q *Queue) {
			defer wg.Done()
			for {
				d, err := q.Take(ctx)
				if err != nil {
					errs <- err
					return
				}
				if string(d) == "stop" { // one per taker, put last
					return
				}
				mu.Lock()
				seen[string(d)]++
				mu.Unlock()
			}
		}(q)
	}
	for i := range items {
		mustPut(t, ctx, producer, fmt.Sprint(i))
	}
	for range takers {
		mustPut(t, ctx, producer, "stop")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Take: %v", err)
	}
	for i := range items {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Errorf("item %d taken %d times", i, n)
		}
	}
	if n, err := producer.Len(ctx); err != nil || n != 0 {
		t.Errorf("Len after draining = %d, %v", n, err)
	}
}

func TestPriorityOrder(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	pq, err := NewPriority(connect(t), "/prio")
	if err != nil {
		t.Fatal(err)
	}
	puts := []struct {
		prio int
		data string
	}{{5, "low-1"}, {1, "high-1"}, {5, "low-2"}, {0, "urgent"}, {1, "high-2"}, {999, "last"}}
	for _, p := range puts {
		if _, err := pq.Put(ctx, p.prio, []byte(p.data)); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := pq.Peek(ctx); err != nil || string(d) != "urgent" {
		t.Fatalf("Peek = %q, %v", d, err)
	}
	var got []string
	for range puts {
		d, err := pq.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(d))
	}
	want := []string{"urgent", "high-1", "high-2", "low-1", "low-2", "last"}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v; want %v", got, want)
	}
	for _, p := range []int{-1, 1000} {
		if _, err := pq.Put(ctx, p, nil); !errors.Is(err, ErrPriority) {
			t.Errorf("Put with priority %d = %v; want ErrPriority", p, err)
		}
	}
}

// Items whose sequence numbers wrapped negative are served after the
// positive ones that came before them, and foreign children are ignored.
func TestWrappedSequenceAndForeignChildren(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	q, _ := New(sess, "/wrapped")
	if err := sess.EnsurePath(ctx, "/wrapped"); err != nil {
		t.Fatal(err)
	}
	// Nodes named as ZooKeeper would name them around the wrap, created
	// directly; plus foreign children.
	for _, n := range []string{"queue--2147483647", "queue-2147483646", "queue--2147483648", "queue-2147483647",
		"lock-0000000001", "queue-abc", "config"} {
		if _, err := sess.Create(ctx, "/wrapped/"+n, []byte(n), zkcoord.FlagPersistent); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := q.Len(ctx); err != nil || n != 4 {
		t.Fatalf("Len = %d, %v; want 4", n, err)
	}
	var got []string
	for range 4 {
		d, err := q.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(d))
	}
	want := []string{"queue-2147483646", "queue-2147483647", "queue--2147483648", "queue--2147483647"}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v; want %v", got, want)
	}
	if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake with only foreign children = %v; want ErrEmpty", err)
	}
	for _, n := range []string{"lock-0000000001", "queue-abc", "config"} {
		if ok, _, _ := sess.Exists(ctx, "/wrapped/"+n); !ok {
			t.Errorf("foreign child %s was removed", n)
		}
	}
}

func TestPutTooLarge(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	q, _ := New(connect(t, func(c *zkcoord.Config) { c.MaxDataSize = 1024 }), "/big")
	if _, err := q.Put(ctx, make([]byte, 1025)); !errors.Is(err, zkcoord.ErrTooLarge) {
		t.Fatalf("Put of 1025 bytes = %v; want ErrTooLarge", err)
	}
	if _, err := q.Put(ctx, make([]byte, 1024)); err != nil {
		t.Fatalf("Put of 1024 bytes: %v", err)
	}
	if n, _ := q.Len(ctx); n != 1 {
		t.Fatalf("Len = %d; want 1", n)
	}
	if _, err := New(nil, "relative"); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("New with a bad path = %v", err)
	}
}

// A taker works through one listing before listing again: taking a deep
// queue costs a listing per many items, not one per item.
func TestTakeReusesItsListing(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	q, _ := New(connect(t), "/deep")
	const n = 40
	for i := range n {
		mustPut(t, ctx, q, fmt.Sprint(i))
	}
	var lists atomic.Int32
	testHookList = func() { lists.Add(1) }
	defer func() { testHookList = nil }()
	for i := range n {
		data, err := q.Take(ctx)
		if err != nil || string(data) != fmt.Sprint(i) {
			t.Fatalf("Take %d = %q, %v", i, data, err)
		}
	}
	if got := lists.Load(); got > 2 {
		t.Fatalf("%d listings to take %d items; want at most 2", got, n)
	}
}
