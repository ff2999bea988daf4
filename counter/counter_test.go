package counter

import (
	"bytes"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// A counter whose node is missing reads as its seed at version 0, and the
// read writes nothing: neither the node nor its parent appears.
func TestGetOfAMissingCounterWritesNothing(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	c, err := New(sess, "/stats/visits", WithSeed(42))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx)
	if err != nil || got != (Count{Value: 42, Version: 0}) {
		t.Fatalf("Get = %+v, %v; want 42 at version 0", got, err)
	}
	if ok, _, err := sess.Exists(ctx, "/stats"); err != nil || ok {
		t.Fatalf("after Get, /stats exists = %v, %v; want a read to write nothing", ok, err)
	}
}

// The first write creates the node with the seed, so that a count read
// from the missing node is the one the conditional write starts from.
func TestFirstWriteCreatesTheNodeWithTheSeed(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	c, _ := New(sess, "/stats/visits", WithSeed(42))
	other, _ := New(connect(t), "/stats/visits", WithSeed(42))
	first, err := c.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, ok, err := c.TrySetCount(ctx, first, 43)
	if err != nil || !ok || n != (Count{Value: 43, Version: 1}) {
		t.Fatalf("TrySetCount from the missing node = %+v, %v, %v; want 43 at version 1", n, ok, err)
	}
	data, _, err := sess.Get(ctx, "/stats/visits")
	if err != nil || !bytes.Equal(data, []byte{0, 0, 0, 43}) {
		t.Fatalf("node data = %v, %v; want 4-byte big-endian 43", data, err)
	}
	// The other client still holds the missing node's count: its write
	// must fail and tell it the current one.
	cur, ok, err := other.TrySetCount(ctx, first, 99)
	if err != nil || ok || cur != n {
		t.Fatalf("stale TrySetCount = %+v, %v, %v; want false and %+v", cur, ok, err, n)
	}

	added, _ := New(sess, "/stats/added", WithSeed(42))
	if got, err := added.Add(ctx, 1); err != nil || got != (Count{Value: 43, Version: 1}) {
		t.Fatalf("Add on the missing node = %+v, %v; want 43 at version 1", got, err)
	}
	set, _ := New(sess, "/stats/set", WithSeed(42))
	if got, err := set.SetCount(ctx, 7); err != nil || got.Value != 7 {
		t.Fatalf("SetCount on the missing node = %+v, %v; want 7", got, err)
	}
}

func TestSetAndTrySet(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	a, _ := New(connect(t), "/c")
	b, _ := New(connect(t), "/c")
	first, err := a.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, ok, err := a.TrySetCount(ctx, first, 10)
	if err != nil || !ok || n.Value != 10 || n.Version != first.Version+1 {
		t.Fatalf("TrySetCount = %+v, %v, %v", n, ok, err)
	}
	// b still holds the first version: its conditional write must fail and
	// tell it the current count.
	cur, ok, err := b.TrySetCount(ctx, first, 99)
	if err != nil || ok || cur != n {
		t.Fatalf("stale TrySetCount = %+v, %v, %v; want false and %+v", cur, ok, err, n)
	}
	s, err := b.SetCount(ctx, -7)
	if err != nil || s.Value != -7 || s.Version != n.Version+1 {
		t.Fatalf("SetCount = %+v, %v", s, err)
	}
	if g, _ := a.Get(ctx); g != s {
		t.Fatalf("Get = %+v; want %+v", g, s)
	}
}

func TestConcurrentAdds(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const (
		workers = 4
		adds    = 25
	)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		c, _ := New(connect(t), "/hits")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range adds {
				if _, err := c.Add(ctx, 1); err != nil {
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
	c, _ := New(connect(t), "/hits")
	if got, err := c.Get(ctx); err != nil || got.Value != workers*adds {
		t.Fatalf("Get = %+v, %v; want %d", got, err, workers*adds)
	}
}

func TestCorruptAndEmptyData(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	if _, err := sess.Create(ctx, "/bad", []byte{1, 2, 3}, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	c, _ := New(sess, "/bad")
	if _, err := c.Get(ctx); !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("Get of 3 bytes = %v; want ErrBadData", err)
	}
	if _, err := c.Add(ctx, 1); !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("Add on 3 bytes = %v; want ErrBadData", err)
	}
	w := c.Watch(ctx)
	if _, ok := <-w.Changes(); ok {
		t.Fatal("Watch delivered a count from corrupt data")
	}
	if !errors.Is(w.Err(), zkcoord.ErrBadData) {
		t.Fatalf("Watch Err = %v; want ErrBadData", w.Err())
	}
	if data, _, _ := sess.Get(ctx, "/bad"); !bytes.Equal(data, []byte{1, 2, 3}) {
		t.Fatalf("corrupt data was overwritten: %v", data)
	}

	// An empty node, as Kazoo creates it, reads as the seed.
	if _, err := sess.Create(ctx, "/empty", nil, zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	e, _ := New(sess, "/empty", WithSeed(5))
	if got, err := e.Get(ctx); err != nil || got.Value != 5 {
		t.Fatalf("Get of an empty node = %+v, %v; want the seed 5", got, err)
	}
	if got, err := e.Add(ctx, 1); err != nil || got.Value != 6 {
		t.Fatalf("Add on an empty node = %+v, %v; want 6", got, err)
	}
}

func TestAddOverflow(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	c, _ := New(connect(t), "/big", WithSeed(math.MaxInt32))
	if _, err := c.Add(ctx, 1); !errors.Is(err, ErrOverflow) {
		t.Fatalf("Add past MaxInt32 = %v; want ErrOverflow", err)
	}
	if got, _ := c.Get(ctx); got.Value != math.MaxInt32 {
		t.Fatalf("value after a refused Add = %d", got.Value)
	}
	if got, err := c.Add(ctx, math.MinInt32); err != nil || got.Value != -1 {
		t.Fatalf("Add(MinInt32) = %+v, %v; want -1", got, err)
	}
}

func TestWatchNeverLosesTheNewestCount(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	writer, _ := New(connect(t), "/watched")
	reader, _ := New(connect(t), "/watched")
	w := reader.Watch(ctx) // the node does not exist yet
	defer w.Stop()
	mustCreate(t, ctx, writer) // with 0
	if got := <-w.Changes(); got.Value != 0 {
		t.Fatalf("first count = %+v; want 0", got)
	}
	// Many writes while nobody reads: the reader must end up at the last.
	for i := int32(1); i <= 20; i++ {
		if _, err := writer.SetCount(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	last := Count{Version: -1}
	for last.Value != 20 {
		select {
		case got, ok := <-w.Changes():
			if !ok {
				t.Fatalf("watch ended: %v", w.Err())
			}
			if got.Version <= last.Version {
				t.Fatalf("count went backwards: %+v after %+v", got, last)
			}
			last = got
		case <-ctx.Done():
			t.Fatalf("never saw the newest count; last %+v", last)
		}
	}
	w.Stop()
	if _, ok := <-w.Changes(); ok {
		t.Fatal("channel open after Stop")
	}
	if w.Err() != nil {
		t.Fatalf("Err after Stop = %v; want nil", w.Err())
	}
}

func TestWatchEndsWithSession(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	c := mustCreate(t, ctx, mustCounter(t, sess, "/w"))
	w := c.Watch(ctx)
	if got := <-w.Changes(); got != (Count{}) {
		t.Fatalf("first count = %+v; want 0 at version 0", got)
	}
	sess.Close(ctx)
	for range w.Changes() {
	}
	if !errors.Is(w.Err(), zkcoord.ErrSessionClosed) {
		t.Fatalf("Err = %v; want ErrSessionClosed", w.Err())
	}
}
