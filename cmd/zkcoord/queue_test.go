//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/queue"
)

// "queue take --work" is at least once: a taker killed (SIGKILL) in the
// middle of its batches loses nothing. Every item is printed by it or
// still in the queue, and the next taker gets all that is left once the
// killed taker's session has expired.
func TestQueueWorkTakeKilledMidBatchLosesNothing(t *testing.T) {
	t.Parallel()
	const items = 3000
	path := unique(t)
	sess := session(t)
	ctx := testkit.Ctx(t, 3*time.Minute)
	wq, err := queue.NewWork(sess, path)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, items)
	var (
		wg   sync.WaitGroup
		errs = make(chan error, 8)
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < items; i += 8 {
				if err := wq.Put(ctx, []byte(fmt.Sprint(i)), queue.DefaultWorkPriority); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range want {
		want[i] = fmt.Sprint(i)
	}

	if out := mustZkc(t, "queue", "len", "--work", path); out != fmt.Sprintf("%d\n", items) {
		t.Fatalf("queue len --work = %q; want %d", out, items)
	}

	taker := start(t, nil, "queue", "take", "--work", "-n", fmt.Sprint(items), path)
	testkit.Eventually(t, time.Minute, "the taker printing its first items", func() bool {
		return len(taker.stdout()) > 0 || taker.Exited()
	})
	if err := taker.Kill(); err != nil {
		t.Fatal(err)
	}
	printed := taker.stdout()
	if len(printed) == 0 || len(printed) >= items {
		t.Fatalf("the taker printed %d of %d items before it was killed: not killed mid-run\n%s",
			len(printed), items, taker.Stderr())
	}

	// Every item is printed or still in the queue.
	entries, _, err := sess.Children(ctx, path+"/entries")
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		data, _, err := sess.Get(ctx, path+"/entries/"+e)
		if errors.Is(err, zkcoord.ErrNoNode) {
			continue // acknowledged by a request the killed taker had sent
		}
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, string(data))
	}
	if missing := lostItems(want, printed, left); len(missing) > 0 {
		t.Fatalf("killed after printing %d items, %d left in the queue: %d lost, e.g. %v",
			len(printed), len(left), len(missing), missing[:min(5, len(missing))])
	}
	t.Logf("killed after printing %d items; %d left in the queue", len(printed), len(left))

	// The next taker gets what is left, once the killed taker's claims
	// have expired with its session.
	r := zkc(t, "queue", "take", "--work", "-n", fmt.Sprint(len(left)), "--timeout", "40s", path)
	if r.code != 0 {
		t.Fatalf("the next taker: %s", r)
	}
	next := strings.Fields(r.stdout)
	if missing := lostItems(want, printed, next); len(missing) > 0 {
		t.Fatalf("%d items neither printed by the killed taker nor by the next, e.g. %v", len(missing), missing[:min(5, len(missing))])
	}
	if n, err := wq.Len(context.Background()); err != nil || n != 0 {
		t.Fatalf("queue length after both takers = %d, %v; want 0", n, err)
	}
}

// "queue put --work" puts into the work-queue layout, by priority (100,
// Kazoo's default, without --priority), and "take --work" takes from it.
func TestQueueWorkPutTake(t *testing.T) {
	t.Parallel()
	path := unique(t)
	mustZkc(t, "queue", "put", "--work", path, "b1", "b2")
	mustZkc(t, "queue", "put", "--work", "--priority", "5", path, "a")
	if out := mustZkc(t, "queue", "take", "--work", "-n", "3", "--no-wait", path); out != "a\nb1\nb2\n" {
		t.Fatalf("take --work -n 3 = %q", out)
	}
	if r := zkc(t, "queue", "take", "--work", "--no-wait", path); r.code != exitFailure || !strings.Contains(r.stderr, "is empty") {
		t.Fatalf("take --work from an empty queue: %s", r)
	}
	// The plain layout at the same path sees none of it.
	mustZkc(t, "queue", "put", "--work", path, "c")
	if out := mustZkc(t, "queue", "len", path); out != "0\n" {
		t.Fatalf("plain len of a work queue = %q", out)
	}
}

// lostItems returns the items of want in neither a nor b.
func lostItems(want, a, b []string) []string {
	var lost []string
	for _, w := range want {
		if !slices.Contains(a, w) && !slices.Contains(b, w) {
			lost = append(lost, w)
		}
	}
	return lost
}
