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

func claimData(cs []*Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c.Data())
	}
	return out
}

// A batch claim returns the first unclaimed items in serving order; each
// claim is then acknowledged or released on its own.
func TestWorkQueueTakeN(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	q := newWork(t, connect(t))
	other := newWork(t, connect(t))
	for i := range 5 {
		if err := q.Put(ctx, []byte(fmt.Sprint(i)), DefaultWorkPriority); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := q.TakeN(ctx, 3)
	if err != nil || fmt.Sprint(claimData(cs)) != "[0 1 2]" {
		t.Fatalf("TakeN(3) = %v, %v; want [0 1 2]", claimData(cs), err)
	}
	// Another consumer sees only what is left.
	rest, err := other.TryTakeN(ctx, 10)
	if err != nil || fmt.Sprint(claimData(rest)) != "[3 4]" {
		t.Fatalf("TryTakeN(10) by another consumer = %v, %v; want [3 4]", claimData(rest), err)
	}
	if err := cs[1].Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range append([]*Claim{cs[0], cs[2]}, rest...) {
		if err := c.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	again, err := other.TryTakeN(ctx, 10)
	if err != nil || fmt.Sprint(claimData(again)) != "[1]" {
		t.Fatalf("TryTakeN after a release = %v, %v; want [1]", claimData(again), err)
	}
	if err := again[0].Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.TryTakeN(ctx, 2); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTakeN of an empty queue = %v; want ErrEmpty", err)
	}
	if _, err := q.TakeN(ctx, 0); !errors.Is(err, ErrBatch) {
		t.Fatalf("TakeN(0) = %v; want ErrBatch", err)
	}
}

// Consumers claiming in batches never hold the same item, and acknowledge
// every item once.
func TestWorkQueueConcurrentBatchConsumers(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const (
		items     = 200
		consumers = 5
	)
	producer := newWork(t, connect(t))
	for i := range items {
		if err := producer.Put(ctx, []byte(fmt.Sprint(i)), DefaultWorkPriority); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
		errs = make(chan error, consumers)
	)
	for i := range consumers {
		q := newWork(t, connect(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				cs, err := q.TryTakeN(ctx, 2+i*5)
				if errors.Is(err, ErrEmpty) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				for _, c := range cs {
					mu.Lock()
					seen[string(c.Data())]++
					mu.Unlock()
					if err := c.Ack(ctx); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("consumer: %v", err)
	}
	for i := range items {
		if n := seen[fmt.Sprint(i)]; n != 1 {
			t.Errorf("item %d processed %d times", i, n)
		}
	}
}

// A batch claim whose transaction commits and whose reply is lost with the
// connection: the consumer finds out from its first claim that the whole
// batch is its own, and no other consumer gets any of it.
func TestWorkQueueTakeNWhoseReplyIsLost(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	p := cluster.NewProxy(t)
	sess := connect(t, func(c *zkcoord.Config) {
		c.Servers = p.Servers()
		c.SessionTimeout = 60 * time.Second
	})
	observer := connect(t)
	testkit.UntilLost(t, func(delay time.Duration) bool {
		path := fmt.Sprintf("/wlost-%d", delay.Milliseconds())
		producer, _ := NewWork(observer, path)
		for _, s := range []string{"x", "y", "z"} {
			if err := producer.Put(ctx, []byte(s), DefaultWorkPriority); err != nil {
				t.Fatal(err)
			}
		}
		entries, _, err := observer.Children(ctx, path+"/entries")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(entries)
		q, _ := NewWork(sess, path)
		var cs []*Claim
		lost, err := testkit.LoseReply(t, ctx, p, observer, path+"/taken/"+entries[0], delay,
			testkit.Signal(t, &testHookClaimUnknown), func() (err error) {
				cs, err = q.TakeN(ctx, 3)
				return err
			})
		if err != nil || fmt.Sprint(claimData(cs)) != "[x y z]" {
			t.Fatalf("TakeN with a lost reply = %v, %v; want [x y z]", claimData(cs), err)
		}
		if _, err := producer.TryTakeN(ctx, 3); !errors.Is(err, ErrEmpty) {
			t.Fatalf("another consumer's TryTakeN = %v; want ErrEmpty", err)
		}
		for _, c := range cs {
			if err := c.Ack(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return lost
	})
}
