package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func strs(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// A batch take returns the head of the queue in order, as many items as
// asked for while there are enough, and reuses its listing.
func TestTakeNInOrder(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	q, _ := New(connect(t), "/batch")
	for i := range 10 {
		mustPut(t, ctx, q, fmt.Sprint(i))
	}
	var lists atomic.Int32
	testHookList = func() { lists.Add(1) }
	defer func() { testHookList = nil }()
	for _, want := range []string{"[0 1 2 3]", "[4 5 6 7]", "[8 9]"} {
		d, err := q.TakeN(ctx, 4)
		if err != nil || fmt.Sprint(strs(d)) != want {
			t.Fatalf("TakeN(4) = %q, %v; want %s", d, err, want)
		}
	}
	if n := lists.Load(); n > 2 {
		t.Fatalf("%d listings to take 10 items in batches; want at most 2", n)
	}
	if _, err := q.TryTakeN(ctx, 4); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTakeN of an empty queue = %v; want ErrEmpty", err)
	}
	if _, err := q.TakeN(ctx, 0); !errors.Is(err, ErrBatch) {
		t.Fatalf("TakeN(0) = %v; want ErrBatch", err)
	}
	if c, _, err := q.sess.Children(ctx, "/batch/claims"); err != nil || len(slices.DeleteFunc(c, isReceipt)) > 0 {
		t.Fatalf("claim markers after the takes: %v, %v", c, err)
	}
}

// An item another taker gets between a batch's reads and its transaction
// costs the batch that item, not the batch, wherever it is in the batch.
func TestTakeNSkipsAnItemTakenMeanwhile(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	a, _ := New(connect(t), "/race")
	other := connect(t)
	var paths []string
	for _, s := range []string{"w", "x", "y", "z"} {
		p, err := a.Put(ctx, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var fired atomic.Bool
	hooks(t, func(string) {
		if !fired.CompareAndSwap(false, true) {
			return
		}
		// a has read w, x, y and z and is about to delete them; another
		// client takes y first (deleting it is what a taker's commit does).
		if err := other.Delete(ctx, paths[2], -1); err != nil {
			t.Errorf("delete y: %v", err)
		}
	}, nil)
	var lists atomic.Int32
	testHookList = func() { lists.Add(1) }
	defer func() { testHookList = nil }()
	d, err := a.TakeN(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(strs(d)) != "[w x z]" {
		t.Fatalf("TakeN(4) = %q; want [w x z]", d)
	}
	if n := lists.Load(); n != 1 {
		t.Fatalf("%d listings; want the batch retried without listing again", n)
	}
}

// Batch takers racing over one queue never get the same item, and get all
// of them.
func TestConcurrentBatchTakersTakeEachItemOnce(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const (
		items  = 300
		takers = 6
	)
	producer, _ := New(connect(t), "/busy")
	for i := range items {
		mustPut(t, ctx, producer, fmt.Sprint(i))
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
		errs = make(chan error, takers)
	)
	for i := range takers {
		q, _ := New(connect(t), "/busy")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				d, err := q.TryTakeN(ctx, 3+i*4)
				if errors.Is(err, ErrEmpty) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				if !slices.IsSortedFunc(d, func(a, b []byte) int { return cmpNum(string(a), string(b)) }) {
					errs <- fmt.Errorf("batch out of order: %q", d)
				}
				mu.Lock()
				for _, s := range d {
					seen[string(s)]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("TryTakeN: %v", err)
	}
	for i := range items {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Errorf("item %d taken %d times", i, n)
		}
	}
}

func cmpNum(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// A batch whose transaction commits and whose reply is lost still delivers
// every item of the batch, and only to its taker.
func TestTakeNWhoseReplyIsLostStillDelivers(t *testing.T) {
	for _, delay := range []time.Duration{2 * time.Second, 5 * time.Second, 10 * time.Second} {
		if batchReplyLost(t, delay) {
			return
		}
		t.Logf("the reply arrived despite a %v delay; trying a longer one", delay)
	}
	t.Fatal("the reply was never lost: the fault was not exercised")
}

func batchReplyLost(t *testing.T, delay time.Duration) (exercised bool) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	partitioned, proxy := throughProxy(t, 60*time.Second)
	observer := connect(t)
	a, _ := New(partitioned, "/q")
	b, _ := New(connect(t), "/q")
	if err := observer.EnsurePath(ctx, "/q/claims"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"x", "y", "z"} {
		mustPut(t, ctx, b, s)
	}
	var (
		once     sync.Once
		resolved = make(chan outcome, 1)
		faulted  = make(chan error, 1)
	)
	hooks(t, func(itemPath string) {
		once.Do(func() {
			_, _, w, err := observer.GetW(ctx, itemPath)
			if err != nil {
				t.Fatalf("watch %s: %v", itemPath, err)
			}
			if err := proxy.Delay(delay); err != nil {
				t.Fatal(err)
			}
			go func() {
				select {
				case <-w: // the transaction has committed
				case <-ctx.Done():
					faulted <- ctx.Err()
					return
				}
				if err := proxy.Cut(); err != nil {
					faulted <- err
					return
				}
				if _, err := b.TryTake(ctx); !errors.Is(err, ErrEmpty) {
					faulted <- errors.New("another taker got an item or failed: " + errString(err))
					return
				}
				faulted <- proxy.Heal()
			}()
		})
	}, func(o outcome) { resolved <- o })

	d, err := a.TakeN(ctx, 3)
	if err != nil || fmt.Sprint(strs(d)) != "[x y z]" {
		t.Fatalf("TakeN = %q, %v; want [x y z]", d, err)
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
	return true
}

// A batch take on a Session that is lost with the transaction in flight
// reports an unknown outcome.
func TestTakeNOnLostSessionReportsUnknownOutcome(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	partitioned, proxy := throughProxy(t, 4*time.Second)
	a, _ := New(partitioned, "/q")
	b, _ := New(connect(t), "/q")
	mustPut(t, ctx, b, "x")
	mustPut(t, ctx, b, "y")
	var once sync.Once
	hooks(t, func(string) {
		once.Do(func() {
			if err := proxy.Blackhole(); err != nil {
				t.Fatal(err)
			}
		})
	}, nil)
	if _, err := a.TakeN(ctx, 2); !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("TakeN = %v; want ErrOutcomeUnknown", err)
	}
	if d, err := b.TryTakeN(context.Background(), 2); err != nil || fmt.Sprint(strs(d)) != "[x y]" {
		t.Fatalf("TryTakeN by another taker = %q, %v; want [x y] (the transaction never arrived)", d, err)
	}
}

// Takers that work through the same listing spread out after a lost race
// instead of all trying every item: most transactions they send succeed.
func TestConcurrentTakersSpreadOut(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const (
		items  = 400
		takers = 4
	)
	producer, _ := New(connect(t), "/spread")
	for i := range items {
		mustPut(t, ctx, producer, fmt.Sprint(i))
	}
	var tries atomic.Int64
	hooks(t, func(string) { tries.Add(1) }, nil)
	qs := make([]*Queue, takers)
	for i := range qs {
		qs[i], _ = New(connect(t), "/spread")
		if _, err := qs[i].Peek(ctx); err != nil { // connected and ready
			t.Fatal(err)
		}
	}
	var (
		wg    sync.WaitGroup
		taken atomic.Int64
		start = make(chan struct{})
	)
	for _, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for {
				if _, err := q.TryTake(ctx); err != nil {
					return
				}
				taken.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if taken.Load() != items {
		t.Fatalf("took %d items; want %d", taken.Load(), items)
	}
	if per := float64(tries.Load()) / items; per > 1.6 {
		t.Fatalf("%.2f transactions per item; want takers to spread out (at most 1.6)", per)
	}
	t.Logf("%.2f transactions per item", float64(tries.Load())/items)
}
