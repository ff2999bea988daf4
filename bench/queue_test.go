//go:build bench

package bench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/queue"
)

// The queue workloads: consumers drain items from a queue kept at a given
// depth, and each step reports the time per item (the inverse of the items
// per second) and the requests per item.
const (
	queueBatch    = 100 // items per batch take
	queueDataSize = 16  // bytes of data per item
)

// Implementation names of the queue workloads.
const (
	zkQueueName      = zkcoordName + " Queue"
	zkQueueNName     = zkcoordName + " Queue TakeN"
	zkWorkName       = zkcoordName + " WorkQueue"
	zkWorkNName      = zkcoordName + " WorkQueue TakeN"
	zkCuratorName    = zkcoordName + " CuratorQueue"
	zkCuratorLName   = zkcoordName + " CuratorQueue lock path"
	kazooQueueName   = kazooName + " Queue"
	kazooLockingName = kazooName + " LockingQueue"
	curatorQueueName = curatorName + " DistributedQueue"
)

// queueSizes are the sizes of the queue workloads.
type queueSizes struct {
	depths    []int
	consumers []int
	window    time.Duration // a step ends after this long, or after limit items
	rounds    int
	warm      int
}

func queueSizesFor(quick bool) queueSizes {
	if quick {
		return queueSizes{depths: []int{100, 1000}, consumers: []int{1, 4}, window: 300 * time.Millisecond, rounds: 1, warm: -1}
	}
	return queueSizes{depths: []int{100, 10000, 100000}, consumers: []int{1, 4, 16}, window: 1500 * time.Millisecond, rounds: 2}
}

// limit is the most items one step takes from a queue of depth items:
// half of them, so that the depth stays within a factor of two.
func (s queueSizes) limit(depth int) int { return min(depth/2, 20000) }

// reps is how many steps a round runs per consumer count: a shallow queue
// drains in a few milliseconds, so it is measured more often.
func (s queueSizes) reps(depth int) int {
	if depth <= 1000 {
		return 3
	}
	return 1
}

func queueMetric(depth, consumers int) string { return fmt.Sprintf("queue-%d-c%d", depth, consumers) }

// A queue layout: how a library names its items, so that one filler
// serves every library.
type queueLayout struct {
	dir  func(path string) string // the node whose children are the items
	name func(dir string) string  // the sequential name of a new item
	data []byte
	dirs func(path string) []string // nodes to create before filling
}

var (
	// zkcoord's Queue: protected names.
	zkcoordLayout = queueLayout{
		dir:  func(p string) string { return p },
		name: func(dir string) string { return dir + "/" + zkcoord.ProtectedPrefix + newUUID() + "-queue-" },
		data: make([]byte, queueDataSize),
		dirs: func(p string) []string { return []string{p} },
	}
	// Kazoo's LockingQueue, which zkcoord's WorkQueue shares; Kazoo's
	// Queue names its items alike, so it is pointed at the entries node.
	lockingLayout = queueLayout{
		dir:  func(p string) string { return p + "/entries" },
		name: func(dir string) string { return dir + "/entry-100-" },
		data: make([]byte, queueDataSize),
		dirs: func(p string) []string { return []string{p + "/entries", p + "/taken"} },
	}
	// Curator's DistributedQueue: "queue-" items holding Curator's framing
	// of one message (version, an item opcode, the length, the bytes, the
	// end opcode).
	curatorLayout = queueLayout{
		dir:  func(p string) string { return p },
		name: func(dir string) string { return dir + "/queue-" },
		data: curatorItem(make([]byte, queueDataSize)),
		dirs: func(p string) []string { return []string{p} },
	}
)

// newUUID returns a random UUID in its text form, as a protected name
// holds it.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func curatorItem(msg []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x00010001)
	b = append(b, 1)
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	b = append(b, msg...)
	return append(b, 2)
}

// count returns the items of a queue in a layout.
func (l queueLayout) count(conn *zk.Conn, path string) (int, error) {
	children, _, err := conn.Children(l.dir(path))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range children {
		if c != "claims" {
			n++
		}
	}
	return n, nil
}

// fill tops the queue at path up to depth items, with transactions of a
// thousand creates, a few at once.
func (l queueLayout) fill(ctx context.Context, conn *zk.Conn, path string, depth int) error {
	for _, d := range l.dirs(path) {
		if err := ensureRaw(conn, d); err != nil {
			return err
		}
	}
	have, err := l.count(conn, path)
	if err != nil {
		return err
	}
	missing := depth - have
	if missing <= 0 {
		return nil
	}
	const per = 1000
	dir := l.dir(path)
	return forEach(ctx, (missing+per-1)/per, 4, func(ctx context.Context, i int) error {
		n := min(per, missing-i*per)
		ops := make([]any, n)
		for j := range ops {
			ops[j] = &zk.CreateRequest{Path: l.name(dir), Data: l.data, Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagSequence}
		}
		_, err := conn.Multi(ops...)
		return err
	})
}

// removeQueue deletes a queue and everything under it, children first,
// with transactions of a thousand deletes.
func removeQueue(ctx context.Context, conn *zk.Conn, path string) error {
	children, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if c == "entries" || c == "taken" || c == "claims" {
			if err := removeQueue(ctx, conn, path+"/"+c); err != nil {
				return err
			}
		}
	}
	children, _, err = conn.Children(path)
	if err != nil {
		return err
	}
	const per = 1000
	err = forEach(ctx, (len(children)+per-1)/per, 4, func(ctx context.Context, i int) error {
		part := children[i*per : min(len(children), (i+1)*per)]
		ops := make([]any, len(part))
		for j, c := range part {
			ops[j] = &zk.DeleteRequest{Path: path + "/" + c, Version: -1}
		}
		_, err := conn.Multi(ops...)
		return err
	})
	if err != nil {
		return err
	}
	if err := conn.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

// drain runs consumers goroutines, each calling take (with how many items
// it may take at most: per, or fewer near the limit) until limit items are
// taken or the window is over, and reports the time per item. take returns
// how many it took.
func drain(ctx context.Context, consumers, per, limit int, window time.Duration,
	take func(ctx context.Context, i, most int) (int, error)) (stepOut, error) {
	var (
		reserved atomic.Int64
		taken    atomic.Int64
		wg       sync.WaitGroup
		errMu    sync.Mutex
		first    error
	)
	start := time.Now()
	deadline := start.Add(window)
	for i := 0; i < consumers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				most := per - int(max(0, reserved.Add(int64(per))-int64(limit)))
				if most <= 0 {
					reserved.Add(int64(-per))
					return
				}
				n, err := take(ctx, i, most)
				reserved.Add(int64(n - per))
				taken.Add(int64(n))
				if err != nil {
					errMu.Lock()
					first = errors.Join(first, err)
					errMu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if first != nil {
		return stepOut{}, first
	}
	return queueOut(int(taken.Load()), elapsed)
}

func queueOut(items int, elapsed time.Duration) (stepOut, error) {
	if items == 0 {
		return stepOut{}, fmt.Errorf("no item taken in %v", elapsed.Round(time.Millisecond))
	}
	return stepOut{
		values: []float64{ms(int64(elapsed)) / float64(items)},
		ops:    items,
		extra:  map[string]float64{"items_per_s": float64(items) / elapsed.Seconds()},
	}, nil
}

// goQueueImpl measures one of zkcoord's queues: consumers sessions, each
// with a queue object made afresh for every step (so that no listing is
// carried from one step to the next), calling take.
func goQueueImpl(name string, sz queueSizes, depth int, path string, layout queueLayout, batch bool,
	take func(ctx context.Context, sess *zkcoord.Session, path string) func(ctx context.Context, most int) (int, error)) *impl {
	var (
		sessions []*zkcoord.Session
		conn     *zk.Conn
	)
	return &impl{
		name: name,
		setup: func(ctx context.Context) (err error) {
			if conn, err = connectRaw(ctx); err != nil {
				return err
			}
			sessions, err = connectN(ctx, maxOf(sz.consumers))
			return err
		},
		round: func(ctx context.Context, rec *recorder) error {
			for _, c := range sz.consumers {
				for range sz.reps(depth) {
					if err := layout.fill(ctx, conn, path, depth); err != nil {
						return fmt.Errorf("refill: %w", err)
					}
					takers := make([]func(context.Context, int) (int, error), c)
					per := func(c int) int { return 1 }
					if batch {
						// Consumers share the step's items: a batch is at
						// most their share.
						per = func(c int) int { return min(queueBatch, max(1, sz.limit(depth)/c)) }
					}
					for i := range takers {
						takers[i] = take(ctx, sessions[i], path)
					}
					err := rec.step(ctx, queueMetric(depth, c), func() (stepOut, error) {
						return drain(ctx, c, per(c), sz.limit(depth), sz.window, func(ctx context.Context, i, most int) (int, error) {
							return takers[i](ctx, most)
						})
					})
					if err != nil {
						return err
					}
				}
			}
			return nil
		},
		teardown: func(context.Context) error {
			closeAll(sessions)
			conn.Close()
			return nil
		},
	}
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func zkQueueTake(batch bool) func(ctx context.Context, sess *zkcoord.Session, path string) func(context.Context, int) (int, error) {
	return func(ctx context.Context, sess *zkcoord.Session, path string) func(context.Context, int) (int, error) {
		q, err := queue.New(sess, path)
		return func(ctx context.Context, most int) (int, error) {
			if err != nil {
				return 0, err
			}
			if !batch {
				_, err := q.TryTake(ctx)
				if errors.Is(err, queue.ErrEmpty) {
					return 0, errEmptyQueue
				}
				if err != nil {
					return 0, err
				}
				return 1, nil
			}
			items, err := q.TryTakeN(ctx, most)
			if errors.Is(err, queue.ErrEmpty) {
				return 0, errEmptyQueue
			}
			return len(items), err
		}
	}
}

func zkWorkTake(batch bool) func(ctx context.Context, sess *zkcoord.Session, path string) func(context.Context, int) (int, error) {
	return func(ctx context.Context, sess *zkcoord.Session, path string) func(context.Context, int) (int, error) {
		q, err := queue.NewWork(sess, path)
		return func(ctx context.Context, most int) (int, error) {
			if err != nil {
				return 0, err
			}
			var cs []*queue.Claim
			if batch {
				cs, err = q.TryTakeN(ctx, most)
			} else {
				var c *queue.Claim
				if c, err = q.TryTake(ctx); err == nil {
					cs = []*queue.Claim{c}
				}
			}
			if errors.Is(err, queue.ErrEmpty) {
				return 0, errEmptyQueue
			}
			if err != nil {
				return 0, err
			}
			for i, c := range cs {
				if err := c.Ack(ctx); err != nil {
					return i, err
				}
			}
			return len(cs), nil
		}
	}
}

// zkCuratorTake takes from Curator's DistributedQueue layout with
// zkcoord's CuratorQueue: by deleting, as Curator's consumer does without a
// lock path, or, with lock (a lock path), by locking each item first.
func zkCuratorTake(lock string) func(ctx context.Context, sess *zkcoord.Session, path string) func(context.Context, int) (int, error) {
	return func(ctx context.Context, sess *zkcoord.Session, path string) func(context.Context, int) (int, error) {
		var opts []queue.Option
		if lock != "" {
			opts = append(opts, queue.WithLockPath(lock))
		}
		q, err := queue.NewCurator(sess, path, opts...)
		return func(ctx context.Context, most int) (int, error) {
			if err != nil {
				return 0, err
			}
			items, err := q.TryTake(ctx)
			if errors.Is(err, queue.ErrEmpty) {
				return 0, errEmptyQueue
			}
			if err != nil {
				return 0, err
			}
			return len(items), nil
		}
	}
}

// errEmptyQueue: a step drained its queue, which the limit should prevent.
var errEmptyQueue = errors.New("the queue ran empty")

// peerQueueImpl measures a peer's queue: kind names it to the peer.
func peerQueueImpl(p *peer, name, kind string, sz queueSizes, depth int, path string, layout queueLayout) *impl {
	var conn *zk.Conn
	qpath := path
	if kind == "queue" {
		qpath = layout.dir(path) // Kazoo's Queue takes from the LockingQueue's entries
	}
	return &impl{
		name: name,
		setup: func(ctx context.Context) (err error) {
			conn, err = connectRaw(ctx)
			return err
		},
		round: func(ctx context.Context, rec *recorder) error {
			for _, c := range sz.consumers {
				for range sz.reps(depth) {
					if err := layout.fill(ctx, conn, path, depth); err != nil {
						return fmt.Errorf("refill: %w", err)
					}
					err := rec.step(ctx, queueMetric(depth, c), func() (stepOut, error) {
						r, err := p.call(ctx, 10*time.Minute, "queue", map[string]any{
							"kind": kind, "path": qpath, "consumers": c,
							"limit": sz.limit(depth), "window_ms": sz.window.Milliseconds(),
						})
						return r.out(), err
					})
					if err != nil {
						return err
					}
				}
			}
			return nil
		},
		teardown: func(context.Context) error { conn.Close(); return nil },
	}
}

// queueSuite measures the queues at one depth. zkcoord's Queue has a
// queue of its own; its WorkQueue, Kazoo's LockingQueue and Kazoo's Queue
// share one in the LockingQueue layout; Curator's DistributedQueue and
// zkcoord's CuratorQueue share one in Curator's layout. Every step starts from the full depth.
func queueSuite(e *env, depth int) *suite {
	sz := queueSizesFor(e.quick)
	base := fmt.Sprintf("/bench/queue/d%d", depth)
	zkPath, lockPath, curPath, curLock := base+"/zkcoord", base+"/locking", base+"/curator", base+"/curator-lock"
	s := &suite{id: fmt.Sprintf("queue-%d", depth), rounds: sz.rounds, warm: sz.warm}
	var conn *zk.Conn
	fill := &impl{
		// Not measured: fills the queues once before the first round and
		// removes them after the last.
		name: "filler",
		setup: func(ctx context.Context) (err error) {
			if conn, err = connectRaw(ctx); err != nil {
				return err
			}
			t := time.Now()
			for _, q := range []struct {
				path   string
				layout queueLayout
			}{{zkPath, zkcoordLayout}, {lockPath, lockingLayout}, {curPath, curatorLayout}} {
				if err := q.layout.fill(ctx, conn, q.path, depth); err != nil {
					return fmt.Errorf("fill %s: %w", q.path, err)
				}
			}
			log.Printf("bench: queue-%d: filled three queues in %v", depth, time.Since(t).Round(time.Millisecond))
			return nil
		},
		round: func(context.Context, *recorder) error { return nil },
		teardown: func(ctx context.Context) error {
			defer conn.Close()
			for _, p := range []string{zkPath, lockPath, curPath, curLock, base} {
				if err := removeQueue(ctx, conn, p); err != nil {
					return err
				}
			}
			return nil
		},
	}
	s.impls = append(s.impls, fill,
		goQueueImpl(zkQueueName, sz, depth, zkPath, zkcoordLayout, false, zkQueueTake(false)),
		goQueueImpl(zkQueueNName, sz, depth, zkPath, zkcoordLayout, true, zkQueueTake(true)),
		goQueueImpl(zkWorkName, sz, depth, lockPath, lockingLayout, false, zkWorkTake(false)),
		goQueueImpl(zkWorkNName, sz, depth, lockPath, lockingLayout, true, zkWorkTake(true)),
		goQueueImpl(zkCuratorName, sz, depth, curPath, curatorLayout, false, zkCuratorTake("")),
		goQueueImpl(zkCuratorLName, sz, depth, curPath, curatorLayout, false, zkCuratorTake(curLock)),
	)
	if e.kazoo != nil {
		s.impls = append(s.impls,
			peerQueueImpl(e.kazoo, kazooQueueName, "queue", sz, depth, lockPath, lockingLayout),
			peerQueueImpl(e.kazoo, kazooLockingName, "locking", sz, depth, lockPath, lockingLayout))
	}
	if e.curator != nil {
		s.impls = append(s.impls, peerQueueImpl(e.curator, curatorQueueName, "distributed", sz, depth, curPath, curatorLayout))
	}
	return s
}

// queueSuites are the queue suites, loopback only: a throughput figure,
// bounded by this machine.
func queueSuites(e *env) []*suite {
	var out []*suite
	for _, d := range queueSizesFor(e.quick).depths {
		out = append(out, queueSuite(e, d))
	}
	return out
}
