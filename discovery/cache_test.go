package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// next returns the cache's next event, failing the test if none comes
// before ctx ends.
func next(t *testing.T, ctx context.Context, c *Cache) Event {
	t.Helper()
	select {
	case ev, ok := <-c.Events():
		if !ok {
			t.Fatal("the cache's events ended")
		}
		return ev
	case <-ctx.Done():
		t.Fatal("no event from the cache")
	}
	return Event{}
}

// The cache reports the instances it loads, then every registration,
// update and unregistration as an event, with the instance decoded; a node
// that does not hold an instance is no event, and one whose data stops
// being an instance is reported as removed.
func TestCacheReportsChanges(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	register(t, d, Instance{Name: "web", ID: "a", Address: "h", Port: 1})
	b := register(t, d, Instance{Name: "web", ID: "b", Address: "h", Port: 2})
	c, err := d.NewCache(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)

	var loaded []string
	for ev := next(t, ctx, c); ev.Type != Initialized; ev = next(t, ctx, c) {
		if ev.Type != Added {
			t.Fatalf("before Initialized: %v", ev)
		}
		loaded = append(loaded, ev.Instance.ID)
	}
	slices.Sort(loaded)
	if !slices.Equal(loaded, []string{"a", "b"}) {
		t.Fatalf("loaded %v", loaded)
	}
	if got, err := c.Instances(); err != nil || !slices.Equal(ids(got), []string{"a", "b"}) {
		t.Fatalf("Instances = %v, %v", ids(got), err)
	}

	cr := register(t, d, Instance{Name: "web", ID: "c", Address: "h", Port: 3, Disabled: true})
	if ev := next(t, ctx, c); ev.Type != Added || ev.Instance.ID != "c" || !ev.Instance.Disabled {
		t.Fatalf("after a registration: %v %+v", ev, ev.Instance)
	}
	in := cr.Instance()
	in.Port = 33
	if err := cr.Update(ctx, in); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ctx, c); ev.Type != Updated || ev.Instance.ID != "c" || ev.Instance.Port != 33 {
		t.Fatalf("after an update: %v %+v", ev, ev.Instance)
	}
	if err := b.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ctx, c); ev.Type != Removed || ev.Instance.ID != "b" || ev.Instance.Port != 2 {
		t.Fatalf("after an unregistration: %v %+v", ev, ev.Instance)
	}
	// Not an instance: no event. Then "a" turns into one that is not.
	if _, err := sess.Create(ctx, "/svc/web/junk", []byte(`{}`), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Set(ctx, "/svc/web/a", []byte(`{"name":"web","id":"other","port":1}`), -1); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ctx, c); ev.Type != Removed || ev.Instance.ID != "a" || ev.Instance.Port != 1 {
		t.Fatalf("after a's data went bad: %v %+v", ev, ev.Instance)
	}
	if got, err := c.Instances(); err != nil || !slices.Equal(ids(got), []string{"c"}) {
		t.Fatalf("Instances = %v, %v", ids(got), err)
	}

	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for range c.Events() {
	}
	if _, err := c.Instances(); !errors.Is(err, ErrStopped) {
		t.Errorf("Instances after Close: %v", err)
	}
}

func zone(in Instance) string {
	var p struct{ Zone string }
	json.Unmarshal(in.Payload, &p)
	return p.Zone
}

// Filters leave instances out of a provider, on top of disabled ones, and
// instances coming and going are filtered too.
func TestProviderFilters(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	eu := json.RawMessage(`{"zone":"eu"}`)
	register(t, d, Instance{Name: "web", ID: "a", Address: "h", Payload: eu})
	register(t, d, Instance{Name: "web", ID: "b", Address: "h", Payload: json.RawMessage(`{"zone":"us"}`)})
	register(t, d, Instance{Name: "web", ID: "c", Address: "h", Payload: eu, Disabled: true})
	register(t, d, Instance{Name: "web", ID: "d", Address: "h", Port: 8443, Payload: eu})
	p, err := d.NewProvider(ctx, "web",
		WithFilter(func(in Instance) bool { return zone(in) == "eu" }),
		WithFilter(func(in Instance) bool { return in.Port != 8443 }))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if got := ids(served(t, p)); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("served %v, want [a]", got)
	}
	register(t, d, Instance{Name: "web", ID: "e", Address: "h", Payload: eu})
	register(t, d, Instance{Name: "web", ID: "f", Address: "h"})
	testkit.Eventually(t, wait, "e served", func() bool { return slices.Equal(ids(served(t, p)), []string{"a", "e"}) })
	for range 4 {
		if in, err := p.Get(); err != nil || (in.ID != "a" && in.ID != "e") {
			t.Fatalf("Get = %v, %v", in.ID, err)
		}
	}
}

// clock is a settable clock for down times.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// NoteError takes an instance out once it has failed errorThreshold times
// within the timeout, for the timeout; errors further apart do not add up.
func TestDownPolicy(t *testing.T) {
	sess := connect(t)
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	a := register(t, d, Instance{Name: "web", ID: "a", Address: "h"}).Instance()
	register(t, d, Instance{Name: "web", ID: "b", Address: "h"})
	clk := &clock{now: time.Unix(1000, 0)}
	p, err := d.NewProvider(ctx, "web", WithDownPolicy(time.Minute, 3), WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	both, onlyB := []string{"a", "b"}, []string{"b"}
	expect := func(when string, want []string) {
		t.Helper()
		if got := ids(served(t, p)); !slices.Equal(got, want) {
			t.Fatalf("%s: served %v, want %v", when, got, want)
		}
	}

	p.NoteError(a)
	p.NoteError(a)
	expect("after two errors", both)
	clk.advance(time.Minute) // the first two fall out of the window
	p.NoteError(a)
	expect("after a third error a minute later", both)
	clk.advance(10 * time.Second)
	p.NoteError(a)
	clk.advance(10 * time.Second)
	p.NoteError(a)
	expect("after three errors within a minute", onlyB)
	for range 4 {
		if in, err := p.Get(); err != nil || in.ID != "b" {
			t.Fatalf("Get with a down = %v, %v", in.ID, err)
		}
	}
	clk.advance(time.Minute - time.Nanosecond)
	expect("just before the timeout", onlyB)
	clk.advance(time.Nanosecond)
	expect("at the timeout", both)
	// The count started afresh: one more error does not take it out.
	p.NoteError(a)
	expect("after one error more", both)

	// The default is Curator's: two errors within 30 seconds.
	q, err := d.NewProvider(ctx, "web", WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(ctx)
	q.NoteError(a)
	clk.advance(29 * time.Second)
	q.NoteError(a)
	if got := ids(served(t, q)); !slices.Equal(got, onlyB) {
		t.Fatalf("default policy: served %v after two errors", got)
	}
	clk.advance(30 * time.Second)
	if got := ids(served(t, q)); !slices.Equal(got, both) {
		t.Fatalf("default policy: served %v after 30 seconds", got)
	}
}

// A cache cut off from ZooKeeper reports the Session's states, and after
// the reconnection what changed meanwhile.
func TestCacheCatchesUpAfterADisconnection(t *testing.T) {
	ctx := testkit.Ctx(t, wait)
	proxy := cluster.NewProxy(t)
	sess := connect(t, func(c *zkcoord.Config) { c.Servers = proxy.Servers() })
	registrar := newDiscovery(t, connect(t), "/svc")
	gone := register(t, registrar, Instance{Name: "web", ID: "gone", Address: "h"})
	c, err := newDiscovery(t, sess, "/svc").NewCache(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if ev := next(t, ctx, c); ev.Type != Added || ev.Instance.ID != "gone" {
		t.Fatalf("loaded %v", ev)
	}
	if ev := next(t, ctx, c); ev.Type != Initialized {
		t.Fatalf("then %v", ev)
	}
	if err := proxy.Cut(); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ctx, c); ev.Type != StateChanged || ev.State != zkcoord.Suspended {
		t.Fatalf("after the cut: %v", ev)
	}
	if err := gone.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	register(t, registrar, Instance{Name: "web", ID: "new", Address: "h"})
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ctx, c); ev.Type != StateChanged || ev.State != zkcoord.Reconnected {
		t.Fatalf("after the heal: %v", ev)
	}
	var changes []string
	for range 2 {
		ev := next(t, ctx, c)
		changes = append(changes, ev.String())
	}
	slices.Sort(changes)
	if want := []string{"Added web/new", "Removed web/gone"}; !slices.Equal(changes, want) {
		t.Fatalf("after the reconnection: %q, want %q", changes, want)
	}
	if got, err := c.Instances(); err != nil || !slices.Equal(ids(got), []string{"new"}) {
		t.Fatalf("Instances = %v, %v", ids(got), err)
	}
}
