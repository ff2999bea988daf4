package config

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func TestCreateGetSetDelete(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	n, err := New(connect(t), "/app/settings")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Get(ctx); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing node = %v; want ErrNotFound", err)
	}
	if _, err := n.Set(ctx, []byte("x"), AnyVersion); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Set of a missing node = %v; want ErrNotFound", err)
	}
	v0, err := n.Create(ctx, []byte("a=1"))
	if err != nil || v0.Version != 0 || string(v0.Data) != "a=1" || !v0.Exists || v0.Zxid == 0 {
		t.Fatalf("Create = %+v, %v", v0, err)
	}
	if _, err := n.Create(ctx, []byte("a=2")); !errors.Is(err, ErrExists) {
		t.Fatalf("second Create = %v; want ErrExists", err)
	}
	v1, err := n.Set(ctx, []byte("a=2"), v0.Version)
	if err != nil || v1.Version != 1 || v1.Zxid <= v0.Zxid {
		t.Fatalf("Set = %+v, %v", v1, err)
	}
	if _, err := n.Set(ctx, []byte("a=3"), v0.Version); !errors.Is(err, ErrConflict) {
		t.Fatalf("Set from a stale version = %v; want ErrConflict", err)
	}
	if got, err := n.Get(ctx); err != nil || string(got.Data) != "a=2" || got.Version != 1 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := n.Set(ctx, []byte("a=4"), AnyVersion); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete(ctx, v1.Version); !errors.Is(err, ErrConflict) {
		t.Fatalf("Delete from a stale version = %v; want ErrConflict", err)
	}
	if err := n.Delete(ctx, AnyVersion); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete(ctx, AnyVersion); err != nil {
		t.Fatalf("Delete of a missing node: %v", err)
	}
}

func TestTooLargeAndBadPath(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	n, _ := New(connect(t, func(c *zkcoord.Config) { c.MaxDataSize = 100 }), "/big")
	if _, err := n.Create(ctx, make([]byte, 101)); !errors.Is(err, zkcoord.ErrTooLarge) {
		t.Fatalf("Create of 101 bytes = %v; want ErrTooLarge", err)
	}
	if _, err := New(nil, "no/slash"); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Fatalf("New with a bad path = %v", err)
	}
}

type limits struct {
	MaxConns int      `json:"max_conns"`
	Hosts    []string `json:"hosts,omitempty"`
}

// Concurrent read-modify-write updates from several sessions lose nothing.
func TestConcurrentJSONUpdates(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const (
		workers = 4
		updates = 10
	)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		j, _ := NewJSON[limits](connect(t), "/limits")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range updates {
				_, err := j.Update(ctx, func(cur Value[limits]) (limits, error) {
					cur.Value.MaxConns++
					return cur.Value, nil
				})
				if err != nil {
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
	j, _ := NewJSON[limits](connect(t), "/limits")
	got, err := j.Get(ctx)
	if err != nil || got.Value.MaxConns != workers*updates || got.Version != workers*updates-1 {
		t.Fatalf("Get = %+v, %v; want %d updates", got, err, workers*updates)
	}
}

func TestJSONWithBadData(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	j, _ := NewJSON[limits](sess, "/broken")
	if _, err := sess.Create(ctx, "/broken", []byte("max_conns = 5"), zkcoord.FlagPersistent); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Get(ctx); !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("Get of bad JSON = %v; want ErrBadData", err)
	}
	_, err := j.Update(ctx, func(cur Value[limits]) (limits, error) { return limits{MaxConns: 1}, nil })
	if !errors.Is(err, zkcoord.ErrBadData) {
		t.Fatalf("Update of bad JSON = %v; want ErrBadData", err)
	}
	if data, _, _ := sess.Get(ctx, "/broken"); string(data) != "max_conns = 5" {
		t.Fatalf("bad JSON was overwritten: %q", data)
	}

	// A watcher reports the bad version and carries on.
	w := j.Watch(ctx)
	defer w.Stop()
	if v := <-w.Changes(); !errors.Is(v.Err, zkcoord.ErrBadData) || !v.Exists {
		t.Fatalf("watched bad version = %+v; want Err ErrBadData", v)
	}
	if _, err := j.Set(ctx, limits{MaxConns: 9}, AnyVersion); err != nil {
		t.Fatal(err)
	}
	if v := <-w.Changes(); v.Err != nil || v.Value.MaxConns != 9 {
		t.Fatalf("watched version after the fix = %+v", v)
	}
}

func TestWatchNeverLosesTheNewestVersion(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	writer, _ := NewJSON[int](connect(t), "/seq")
	reader, _ := New(connect(t), "/seq")
	w := reader.Watch(ctx)
	defer w.Stop()
	if v := <-w.Changes(); v.Exists {
		t.Fatalf("first version of a missing node = %+v; want Exists false", v)
	}
	if _, err := writer.Create(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		if _, err := writer.Set(ctx, i, AnyVersion); err != nil {
			t.Fatal(err)
		}
	}
	var last Version
	for string(last.Data) != "20" {
		select {
		case v, ok := <-w.Changes():
			if !ok {
				t.Fatalf("watch ended: %v", w.Err())
			}
			if v.Exists && v.Zxid <= last.Zxid {
				t.Fatalf("version went backwards: %+v after %+v", v, last)
			}
			last = v
		case <-ctx.Done():
			t.Fatalf("never saw the newest version; last %q", last.Data)
		}
	}
	if err := writer.Node().Delete(ctx, AnyVersion); err != nil {
		t.Fatal(err)
	}
	if v := <-w.Changes(); v.Exists {
		t.Fatalf("after delete: %+v; want Exists false", v)
	}
	if _, err := writer.Create(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if v := <-w.Changes(); !v.Exists || string(v.Data) != "7" || v.Version != 0 {
		t.Fatalf("after re-create: %+v", v)
	}
}

func TestWatchEnds(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	n, _ := New(sess, "/w")
	short, cancel := context.WithCancel(ctx)
	w := n.Watch(short)
	<-w.Changes()
	cancel()
	for range w.Changes() {
	}
	if !errors.Is(w.Err(), context.Canceled) {
		t.Fatalf("Err after ctx ended = %v; want Canceled", w.Err())
	}

	w = n.Watch(ctx)
	<-w.Changes()
	sess.Close(ctx)
	for range w.Changes() {
	}
	if !errors.Is(w.Err(), zkcoord.ErrSessionClosed) {
		t.Fatalf("Err after the session closed = %v; want ErrSessionClosed", w.Err())
	}
	w.Stop() // harmless after the end
}
