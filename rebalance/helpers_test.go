package rebalance_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
)

var rootSeq atomic.Int64

// newRoot returns a root path of the test's own.
func newRoot(t testing.TB) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("/test/%s-%d", name, rootSeq.Add(1))
}

// testCtx returns a context that ends after d or when the test ends.
func testCtx(t testing.TB, d time.Duration) context.Context { return testkit.Ctx(t, d) }

func config(servers []string) zkcoord.Config {
	return zkcoord.Config{Servers: servers, SessionTimeout: 4 * time.Second}
}

// connect opens a Session closed at the end of the test.
func connect(t testing.TB, servers ...string) *zkcoord.Session {
	t.Helper()
	if len(servers) == 0 {
		servers = cluster.Servers()
	}
	return testkit.Open(t, config(servers))
}

// recorder checks, across all the clients of a test, that no resource is
// ever run by two of them at once and that fencing tokens grow.
type recorder struct {
	mu         sync.Mutex
	holder     map[string]string // resource -> client running it
	lastToken  map[string]int64
	starts     map[string]int // resource -> Assigned calls
	stops      map[string]int // resource -> Unassigned calls
	causes     []error
	violations []string
}

func newRecorder() *recorder {
	return &recorder{holder: map[string]string{}, lastToken: map[string]int64{},
		starts: map[string]int{}, stops: map[string]int{}}
}

func (r *recorder) handler(name string) rebalance.Handler {
	return rebalance.Handler{
		Assigned: func(ctx context.Context, a rebalance.Assignment) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if h := r.holder[a.Resource]; h != "" {
				r.violations = append(r.violations, fmt.Sprintf("%s assigned to %s while %s runs it", a.Resource, name, h))
			}
			if a.Token <= r.lastToken[a.Resource] {
				r.violations = append(r.violations, fmt.Sprintf("%s: token %d not above %d", a.Resource, a.Token, r.lastToken[a.Resource]))
			}
			r.holder[a.Resource] = name
			r.lastToken[a.Resource] = a.Token
			r.starts[a.Resource]++
			return nil
		},
		Unassigned: func(a rebalance.Assignment, cause error) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if h := r.holder[a.Resource]; h != name {
				r.violations = append(r.violations, fmt.Sprintf("%s unassigned from %s but held by %q", a.Resource, name, h))
			}
			delete(r.holder, a.Resource)
			r.stops[a.Resource]++
			r.causes = append(r.causes, cause)
			return nil
		},
	}
}

func (r *recorder) check(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.violations {
		t.Errorf("violation: %s", v)
	}
}

// stopCounts returns a copy of the Unassigned counts.
func (r *recorder) stopCounts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.stops))
	for k, v := range r.stops {
		out[k] = v
	}
	return out
}

func (r *recorder) holders() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.holder))
	for k, v := range r.holder {
		out[k] = v
	}
	return out
}

// start joins a client to group, stopped at the end of the test.
func start(t testing.TB, sess *zkcoord.Session, root, group string, h rebalance.Handler, opts ...rebalance.Option) *rebalance.Client {
	t.Helper()
	opts = append([]rebalance.Option{rebalance.WithMinInterval(50 * time.Millisecond)}, opts...)
	c, err := rebalance.Start(testCtx(t, 30*time.Second), sess, zkcoord.Join(root, group), h, opts...)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return c
}

func addResources(t testing.TB, sess *zkcoord.Session, root, group string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := rebalance.AddResource(testCtx(t, 30*time.Second), sess, zkcoord.Join(root, group), id); err != nil {
			t.Fatalf("add %s: %v", id, err)
		}
	}
}

func resourceIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("r%03d", i)
	}
	return out
}

// balanced checks that the clients run exactly the resources, each once,
// with shares differing by at most one, and that the group is settled.
func balanced(ctx context.Context, sess *zkcoord.Session, root, group string, clients []*rebalance.Client, resources []string) error {
	seen := map[string]string{}
	lo, hi := len(resources)+1, -1
	for _, c := range clients {
		as := c.Assignments()
		lo, hi = min(lo, len(as)), max(hi, len(as))
		for _, a := range as {
			if prev, dup := seen[a.Resource]; dup {
				return fmt.Errorf("%s run by %s and %s", a.Resource, prev, c.ID())
			}
			seen[a.Resource] = c.ID()
		}
	}
	if len(seen) != len(resources) {
		return fmt.Errorf("%d of %d resources run", len(seen), len(resources))
	}
	for _, r := range resources {
		if _, ok := seen[r]; !ok {
			return fmt.Errorf("%s not run", r)
		}
	}
	if len(clients) > 0 && hi-lo > 1 {
		return fmt.Errorf("unbalanced: shares from %d to %d", lo, hi)
	}
	d, err := rebalance.Describe(ctx, sess, zkcoord.Join(root, group))
	if err != nil {
		return err
	}
	if d.Rebalancing {
		return fmt.Errorf("still rebalancing: pending %v, unallocated %v", d.Pending, d.Unallocated)
	}
	return nil
}
