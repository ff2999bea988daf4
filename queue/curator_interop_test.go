package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// curatorPeer is a Java process driving Curator's queues
// (testdata/CuratorQueuePeer.java). Its output lines are routed by their
// first word, so that a consumer's events and command replies can
// interleave.
type curatorPeer struct {
	proc *interop.Proc
	mu   sync.Mutex
	tags map[string]chan string
}

func startCurator(t *testing.T, ctx context.Context) *curatorPeer {
	t.Helper()
	proc := interop.CompileJava(t, "testdata/CuratorQueuePeer.java").Start(t, cluster.ConnectString())
	p := &curatorPeer{proc: proc, tags: map[string]chan string{}}
	go func() {
		for line := range proc.Lines() {
			tag, _, _ := strings.Cut(line, " ")
			p.tag(tag) <- line
		}
	}()
	p.next(t, ctx, "ready")
	return p
}

func (p *curatorPeer) tag(tag string) chan string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.tags[tag]
	if !ok {
		ch = make(chan string, 1000)
		p.tags[tag] = ch
	}
	return ch
}

// next returns the next line tagged tag; an error line, the peer's exit or
// the end of ctx fails the test.
func (p *curatorPeer) next(t *testing.T, ctx context.Context, tag string) string {
	t.Helper()
	select {
	case line := <-p.tag(tag):
		return line
	case line := <-p.tag("error"):
		t.Fatalf("Curator: %s", line)
	case <-p.proc.Done():
		t.Fatalf("Curator exited: %v\n%s", p.proc.ExitErr(), p.proc.Stderr())
	case <-ctx.Done():
		t.Fatalf("no %q from Curator: %v\n%s", tag, ctx.Err(), p.proc.Stderr())
	}
	return ""
}

// do sends a command and returns its reply, which must start with want.
func (p *curatorPeer) do(t *testing.T, ctx context.Context, cmd, want string) string {
	t.Helper()
	if err := p.proc.Send(cmd); err != nil {
		t.Fatal(err)
	}
	tag, _, _ := strings.Cut(want, " ")
	line := p.next(t, ctx, tag)
	if !strings.HasPrefix(line, want) {
		t.Fatalf("%s: Curator says %q; want %q", cmd, line, want)
	}
	return line
}

// consumed waits for the next n items a Curator consumer consumed and
// returns them, each with the time Curator consumed it.
func (p *curatorPeer) consumed(t *testing.T, ctx context.Context, n int) ([]string, []time.Time) {
	t.Helper()
	var items []string
	var at []time.Time
	for range n {
		f := strings.Fields(p.next(t, ctx, "consumed"))
		ms, err := strconv.ParseInt(f[3], 10, 64)
		if len(f) != 4 || err != nil {
			t.Fatalf("consumed line %q", f)
		}
		items = append(items, f[2])
		at = append(at, time.UnixMilli(ms))
	}
	return items, at
}

// waitEmpty waits until q is empty: with a lock path, Curator deletes an
// item only after its consumer returned.
func waitEmpty(t *testing.T, ctx context.Context, q interface {
	Len(context.Context) (int, error)
}) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, "an empty queue", func() error {
		if l, err := q.Len(ctx); err != nil || l != 0 {
			return fmt.Errorf("Len = %d, %v: %w", l, err, testkit.ErrNotYet)
		}
		return nil
	})
}

// curatorTaker is what every queue in a Curator layout offers.
type curatorTaker interface {
	Take(ctx context.Context) ([][]byte, error)
	TryTake(ctx context.Context) ([][]byte, error)
	Claim(ctx context.Context) (*Claim, error)
	TryClaim(ctx context.Context) (*Claim, error)
	Len(ctx context.Context) (int, error)
}

// A curatorCase is one of Curator's layouts: how Go opens it and puts to
// it (arg is a priority, a due time in epoch milliseconds, or an id), the
// puts both sides make (several items: one putMulti), and the order in
// which the items are served.
type curatorCase struct {
	kind string
	open func(sess *zkcoord.Session, path string, opts ...Option) (curatorTaker, func(ctx context.Context, arg string, items [][]byte) error)
	puts []curatorPut
	want []string // the puts' items, joined by ",", in serving order
}

type curatorPut struct{ items, arg string }

func bytesOf(csv string) [][]byte {
	var out [][]byte
	for _, s := range strings.Split(csv, ",") {
		out = append(out, []byte(s))
	}
	return out
}

func joined(items [][]byte) string {
	s := make([]string, len(items))
	for i, it := range items {
		s[i] = string(it)
	}
	return strings.Join(s, ",")
}

var curatorCases = []curatorCase{
	{
		kind: "queue",
		open: func(sess *zkcoord.Session, path string, opts ...Option) (curatorTaker, func(context.Context, string, [][]byte) error) {
			q, err := NewCurator(sess, path, opts...)
			if err != nil {
				panic(err)
			}
			return q, func(ctx context.Context, _ string, items [][]byte) error {
				if len(items) == 1 {
					return q.Put(ctx, items[0])
				}
				return q.PutMulti(ctx, items)
			}
		},
		puts: []curatorPut{{"a", ""}, {"b,c", ""}, {"d", ""}},
		want: []string{"a", "b,c", "d"},
	},
	{
		kind: "priority",
		open: func(sess *zkcoord.Session, path string, opts ...Option) (curatorTaker, func(context.Context, string, [][]byte) error) {
			q, err := NewCuratorPriority(sess, path, opts...)
			if err != nil {
				panic(err)
			}
			return q, func(ctx context.Context, arg string, items [][]byte) error {
				p, err := strconv.ParseInt(arg, 10, 32)
				if err != nil {
					return err
				}
				if len(items) == 1 {
					return q.Put(ctx, int32(p), items[0])
				}
				return q.PutMulti(ctx, int32(p), items)
			}
		},
		puts: []curatorPut{{"a", "5"}, {"b,c", "-3"}, {"d", "0"}, {"e", "-2147483648"}, {"f", "5"}, {"g", "2147483647"}},
		want: []string{"e", "b,c", "d", "a", "f", "g"},
	},
	{
		kind: "delay",
		open: func(sess *zkcoord.Session, path string, opts ...Option) (curatorTaker, func(context.Context, string, [][]byte) error) {
			q, err := NewCuratorDelay(sess, path, opts...)
			if err != nil {
				panic(err)
			}
			return q, func(ctx context.Context, arg string, items [][]byte) error {
				ms, err := strconv.ParseInt(arg, 10, 64)
				if err != nil {
					return err
				}
				if len(items) == 1 {
					return q.Put(ctx, time.UnixMilli(ms), items[0])
				}
				return q.PutMulti(ctx, time.UnixMilli(ms), items)
			}
		},
		// Due long ago: served at once, earliest first.
		puts: []curatorPut{{"a", "3000"}, {"b,c", "1000"}, {"d", "2000"}, {"e", "1700000000000"}},
		want: []string{"b,c", "d", "a", "e"},
	},
	{
		kind: "id",
		open: func(sess *zkcoord.Session, path string, opts ...Option) (curatorTaker, func(context.Context, string, [][]byte) error) {
			q, err := NewCuratorID(sess, path, opts...)
			if err != nil {
				panic(err)
			}
			return q, func(ctx context.Context, arg string, items [][]byte) error {
				return q.Put(ctx, arg, items[0])
			}
		},
		// Served in the order put, whatever the id.
		puts: []curatorPut{{"a", "zz"}, {"b", "a/b"}, {"c", "zz"}},
		want: []string{"a", "b", "c"},
	},
}

// curatorModes are the two ways of taking: deleting (Curator without a lock
// path) and locking first (with one).
var curatorModes = []struct {
	name string
	lock bool
}{{"delete", false}, {"lockpath", true}}

// For each of Curator's queue layouts, with and without a lock path: what
// a Java service puts, a Go service takes, in Curator's order, and what a
// Go service puts, Curator's consumer takes, in the same order.
func TestCuratorLayoutsWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 4*time.Minute)
	java := startCurator(t, ctx)
	n := 0
	for _, c := range curatorCases {
		for _, m := range curatorModes {
			t.Run(c.kind+"/"+m.name, func(t *testing.T) {
				n++
				sess := connect(t)
				root := sess.Config().Chroot
				path, lock, jlock := "/jobs", "", "-"
				var opts []Option
				if m.lock {
					lock, jlock = "/jobs-lock", root+"/jobs-lock"
					opts = append(opts, WithLockPath(lock))
				}
				q, put := c.open(sess, path, opts...)
				producer, consumer := fmt.Sprint("p", n), fmt.Sprint("c", n)

				// Java puts; Go takes, in Curator's order.
				java.do(t, ctx, fmt.Sprintf("open %s %s %s %s produce", producer, c.kind, root+path, jlock), "opened")
				for _, p := range c.puts {
					cmd := "put"
					if strings.Contains(p.items, ",") {
						cmd = "putmulti"
					}
					java.do(t, ctx, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", cmd, producer, p.items, p.arg)), "put")
				}
				for _, want := range c.want {
					items, err := q.Take(ctx)
					if err != nil || joined(items) != want {
						t.Fatalf("Go took %q, %v; want %q", joined(items), err, want)
					}
				}
				if items, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
					t.Fatalf("TryTake after the last item = %q, %v; want ErrEmpty", joined(items), err)
				}

				// Go puts; Curator's consumer, started after the puts, takes
				// them in the same order.
				for _, p := range c.puts {
					if err := put(ctx, p.arg, bytesOf(p.items)); err != nil {
						t.Fatal(err)
					}
				}
				java.do(t, ctx, fmt.Sprintf("open %s %s %s %s consume", consumer, c.kind, root+path, jlock), "opened")
				want := strings.Split(strings.Join(c.want, ","), ",")
				if got, _ := java.consumed(t, ctx, len(want)); !slices.Equal(got, want) {
					t.Fatalf("Curator consumed %v; want %v", got, want)
				}
				// With a lock path Curator deletes an item after consuming it.
				waitEmpty(t, ctx, q)
				java.do(t, ctx, "close "+consumer, "closed")
				java.do(t, ctx, "close "+producer, "closed")
			})
		}
	}
}

// With a lock path, Curator's consumers and Go's claims exclude each
// other: an item Go holds is skipped by Curator until Go releases it, and
// an item Curator is consuming is not taken by Go.
func TestCuratorLockPathExcludesWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 3*time.Minute)
	java := startCurator(t, ctx)
	sess := connect(t)
	root := sess.Config().Chroot
	q, _ := NewCurator(sess, "/jobs", WithLockPath("/locks"))
	for _, s := range []string{"x1", "x2"} {
		if err := q.Put(ctx, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := q.Claim(ctx)
	if err != nil || joined(c.Items()) != "x1" {
		t.Fatalf("Claim = %v, %v; want x1", c, err)
	}

	java.do(t, ctx, "open c queue "+root+"/jobs "+root+"/locks consume", "opened")
	if got, _ := java.consumed(t, ctx, 1); got[0] != "x2" {
		t.Fatalf("Curator consumed %s; want x2, skipping x1, which Go holds", got[0])
	}
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Curator lists the queue again when its children change.
	if err := q.Put(ctx, []byte("x3")); err != nil {
		t.Fatal(err)
	}
	if got, _ := java.consumed(t, ctx, 2); !slices.Equal(got, []string{"x1", "x3"}) {
		t.Fatalf("Curator consumed %v after the release; want [x1 x3]", got)
	}

	// Curator holds an item while it consumes it: Go takes nothing.
	if err := q.Put(ctx, []byte("hold-1")); err != nil {
		t.Fatal(err)
	}
	java.next(t, ctx, "holding")
	if c, err := q.TryClaim(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryClaim while Curator consumes the only item = %v, %v; want ErrEmpty", c, err)
	}
	if items, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake while Curator consumes the only item = %q, %v; want ErrEmpty", joined(items), err)
	}
	if err := java.proc.Send("unhold"); err != nil {
		t.Fatal(err)
	}
	if got, _ := java.consumed(t, ctx, 1); got[0] != "hold-1" {
		t.Fatalf("Curator consumed %s; want hold-1", got[0])
	}
	waitEmpty(t, ctx, q)
	java.do(t, ctx, "close c", "closed")
}

// Curator's consumer and Go takers drain one queue together, with and
// without a lock path: every item is taken exactly once.
func TestCuratorConcurrentTakersWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 3*time.Minute)
	java := startCurator(t, ctx)
	for i, m := range curatorModes {
		t.Run(m.name, func(t *testing.T) {
			sess := connect(t)
			root := sess.Config().Chroot
			jlock := "-"
			var opts []Option
			if m.lock {
				opts, jlock = []Option{WithLockPath("/locks")}, root+"/locks"
			}
			const n = 200
			q, _ := NewCurator(sess, "/jobs", opts...)
			var want []string
			for k := range n {
				want = append(want, fmt.Sprint("i", k))
				if err := q.Put(ctx, []byte(want[k])); err != nil {
					t.Fatal(err)
				}
			}
			name := fmt.Sprint("c", i)
			java.do(t, ctx, fmt.Sprintf("open %s queue %s %s consume", name, root+"/jobs", jlock), "opened")
			// Curator is under way before Go starts: they compete for the
			// rest.
			first, _ := java.consumed(t, ctx, 1)
			var (
				mu    sync.Mutex
				goGot []string
				wg    sync.WaitGroup
				errs  = make(chan error, 2)
			)
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					taker, _ := NewCurator(connect(t), "/jobs", opts...)
					for {
						items, err := taker.TryTake(ctx)
						if errors.Is(err, ErrEmpty) {
							return
						}
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						goGot = append(goGot, joined(items))
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			// Go found the queue empty (or every item left locked by
			// Curator): Curator consumed the rest.
			javaGot, _ := java.consumed(t, ctx, n-1-len(goGot))
			javaGot = append(first, javaGot...)
			all := append(slices.Clone(goGot), javaGot...)
			slices.SortFunc(all, cmpNum)
			slices.SortFunc(want, cmpNum)
			if !slices.Equal(all, want) {
				t.Fatalf("taken: Go %v, Curator %v; want each of %v once", goGot, javaGot, want)
			}
			waitEmpty(t, ctx, q)
			java.do(t, ctx, "close "+name, "closed")
			t.Logf("Go took %d items, Curator %d", len(goGot), len(javaGot))
		})
	}
}

// A delay item is not served before it is due, whoever put it and whoever
// takes it.
func TestCuratorDelayQueueWaitsWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	java := startCurator(t, ctx)
	sess := connect(t)
	root := sess.Config().Chroot
	q, _ := NewCuratorDelay(sess, "/later")

	java.do(t, ctx, "open p delay "+root+"/later - produce", "opened")
	due := time.Now().Add(1500 * time.Millisecond)
	java.do(t, ctx, fmt.Sprintf("put p soon %d", due.UnixMilli()), "put")
	if items, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake before the item is due = %q, %v; want ErrEmpty", joined(items), err)
	}
	items, err := q.Take(ctx)
	if took := time.Now(); err != nil || joined(items) != "soon" || took.Before(due.Truncate(time.Millisecond)) {
		t.Fatalf("Take = %q, %v at %v; want soon, not before %v", joined(items), err, took, due)
	}

	due = time.Now().Add(1500 * time.Millisecond)
	if err := q.Put(ctx, due, []byte("later")); err != nil {
		t.Fatal(err)
	}
	java.do(t, ctx, "open c delay "+root+"/later - consume", "opened")
	got, at := java.consumed(t, ctx, 1)
	if got[0] != "later" || at[0].Before(due.Truncate(time.Millisecond)) {
		t.Fatalf("Curator consumed %s at %v; want later, not before %v", got[0], at[0], due)
	}
	java.do(t, ctx, "close c", "closed")
}

// Items of an id queue are removed by id from either side.
func TestCuratorIDQueueRemoveWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	java := startCurator(t, ctx)
	sess := connect(t)
	root := sess.Config().Chroot
	q, _ := NewCuratorID(sess, "/ids")

	java.do(t, ctx, "open p id "+root+"/ids - produce", "opened")
	for _, put := range []string{"put p a x", "put p b y", "put p c x"} {
		java.do(t, ctx, put, "put")
	}
	if n, err := q.Remove(ctx, "x"); err != nil || n != 2 {
		t.Fatalf("Remove(x) = %d, %v; want 2", n, err)
	}
	if items, err := q.TryTake(ctx); err != nil || joined(items) != "b" {
		t.Fatalf("TryTake = %q, %v; want b", joined(items), err)
	}

	for _, id := range []string{"u", "v", "u"} {
		if err := q.Put(ctx, id, []byte("for-"+id)); err != nil {
			t.Fatal(err)
		}
	}
	java.do(t, ctx, "remove p u", "removed 2")
	if items, err := q.TryTake(ctx); err != nil || joined(items) != "for-v" {
		t.Fatalf("TryTake = %q, %v; want for-v", joined(items), err)
	}
	java.do(t, ctx, "close p", "closed")
}

// A SimpleQueue and Curator's SimpleDistributedQueue share one queue.
func TestSimpleQueueWithCurator(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	java := startCurator(t, ctx)
	sess := connect(t)
	path := sess.Config().Chroot + "/simple"
	q, _ := NewSimple(sess, "/simple")

	java.do(t, ctx, "peek "+path, "peeked none")
	for _, s := range []string{"j1", "j2"} {
		java.do(t, ctx, "offer "+path+" "+s, "offered")
	}
	if d, err := q.Peek(ctx); err != nil || string(d) != "j1" {
		t.Fatalf("Peek = %q, %v; want j1", d, err)
	}
	for _, want := range []string{"j1", "j2"} {
		if d, err := q.Take(ctx); err != nil || string(d) != want {
			t.Fatalf("Take = %q, %v; want %s", d, err, want)
		}
	}
	for _, s := range []string{"g1", "g2"} {
		if err := q.Put(ctx, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	java.do(t, ctx, "peek "+path, "peeked g1")
	java.do(t, ctx, "poll "+path, "polled g1")
	java.do(t, ctx, "take "+path, "took g2")
	java.do(t, ctx, "poll "+path, "polled none")
	if _, err := q.TryTake(ctx); !errors.Is(err, ErrEmpty) {
		t.Fatalf("TryTake on the drained queue = %v; want ErrEmpty", err)
	}
}
