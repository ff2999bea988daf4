package cache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// wait is how long tests wait for a condition on a loaded machine.
const wait = 30 * time.Second

// recorder reads a cache's events as they come.
type recorder struct {
	c    *Cache
	mu   sync.Mutex
	evs  []Event
	done chan struct{}
}

// record starts reading c's events; the cache is closed when the test ends.
func record(t *testing.T, c *Cache) *recorder {
	t.Helper()
	r := &recorder{c: c, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ev := range c.Events() {
			r.mu.Lock()
			r.evs = append(r.evs, ev)
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if err := c.Close(testkit.Ctx(t, wait)); err != nil {
			t.Errorf("close: %v", err)
		}
		<-r.done
	})
	return r
}

// events returns the events received so far, as strings.
func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.evs))
	for i, ev := range r.evs {
		out[i] = ev.String()
	}
	return out
}

// len returns how many events were received.
func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.evs)
}

// next waits until the events after the first from have arrived, and
// returns them: exactly want, in order, or the test fails.
func (r *recorder) expect(t *testing.T, from int, want ...string) int {
	t.Helper()
	testkit.WaitFor(t, wait, "events "+strings.Join(want, ", "), func() error {
		got := r.events()[from:]
		if len(got) < len(want) {
			return fmt.Errorf("%w: got %q", testkit.ErrNotYet, got)
		}
		if !slices.Equal(got[:len(want)], want) {
			return fmt.Errorf("got %q, want %q", got, want)
		}
		return nil
	})
	return from + len(want)
}

// until waits for an event of the form s and returns the index after it.
func (r *recorder) until(t *testing.T, from int, s string) int {
	t.Helper()
	var at int
	testkit.Eventually(t, wait, "event "+s, func() bool {
		for i, e := range r.events()[from:] {
			if e == s {
				at = from + i + 1
				return true
			}
		}
		return false
	})
	return at
}

// mk creates nodes with data; each item is "path=data" or "path".
func mk(t *testing.T, s *zkcoord.Session, nodes ...string) {
	t.Helper()
	ctx := testkit.Ctx(t, wait)
	for _, n := range nodes {
		p, d, _ := strings.Cut(n, "=")
		if _, err := s.Create(ctx, p, []byte(d), 0); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
}

func set(t *testing.T, s *zkcoord.Session, path, data string) {
	t.Helper()
	if _, err := s.Set(testkit.Ctx(t, wait), path, []byte(data), -1); err != nil {
		t.Fatalf("set %s: %v", path, err)
	}
}

func del(t *testing.T, s *zkcoord.Session, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := recipe.EnsureDeleted(testkit.Ctx(t, wait), s, p); err != nil {
			t.Fatalf("delete %s: %v", p, err)
		}
	}
}

// data returns the cached data at path ("<none>" if not cached).
func data(c *Cache, path string) string {
	n, ok := c.Get(path)
	if !ok {
		return "<none>"
	}
	return string(n.Data)
}

// started fails the test if a constructor failed.
func started(t *testing.T) func(*Cache, error) *Cache {
	return func(c *Cache, err error) *Cache {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

// put creates or overwrites a node with raw data.
func put(t *testing.T, s *zkcoord.Session, path string, data []byte) {
	t.Helper()
	ctx := testkit.Ctx(t, wait)
	if _, err := s.Set(ctx, path, data, -1); err == nil {
		return
	}
	if _, err := s.Create(ctx, path, data, 0); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}

// snapshot returns the events received so far.
func (r *recorder) snapshot() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

// bothWays runs test on the two ways a cache follows a tree: one
// recursive watch (the test server, ZooKeeper 3.8, has them) and one-shot
// watches, as on a server before 3.6.
func bothWays(t *testing.T, test func(t *testing.T)) {
	t.Helper()
	t.Run("recursive", test)
	t.Run("one-shot", func(t *testing.T) {
		withoutPersistentWatches(t)
		test(t)
	})
}

// withoutPersistentWatches makes the caches that the test starts meet a
// server without persistent watches: their addWatch fails as ZooKeeper
// before 3.6 answers it (Unimplemented), and they find their way from
// there. It returns how many times a cache asked.
func withoutPersistentWatches(t *testing.T) *atomic.Int64 {
	real := addWatch
	var asked atomic.Int64
	addWatch = func(_ context.Context, _ *zkcoord.Session, path string) (*zkcoord.PersistentWatch, error) {
		asked.Add(1)
		return nil, fmt.Errorf("zkcoord: add watch %s: %w", path, zkcoord.ErrUnimplemented)
	}
	t.Cleanup(func() { addWatch = real })
	return &asked
}
