//go:build bench

package cache

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// countingConn counts the requests a client sends: ZooKeeper frames are a
// 4-byte big-endian length and that many bytes.
type countingConn struct {
	net.Conn
	n *atomic.Int64

	mu   sync.Mutex
	hdr  []byte
	left int
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	for q := p; len(q) > 0; {
		if c.left > 0 {
			k := min(c.left, len(q))
			c.left -= k
			q = q[k:]
			continue
		}
		need := 4 - len(c.hdr)
		k := min(need, len(q))
		c.hdr = append(c.hdr, q[:k]...)
		q = q[k:]
		if len(c.hdr) == 4 {
			c.left = int(binary.BigEndian.Uint32(c.hdr))
			c.hdr = c.hdr[:0]
			c.n.Add(1)
		}
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestBenchTree measures a tree cache of 10,001 nodes both ways, side by
// side: on one recursive watch with batched reads, and on one-shot watches
// (as on a server before 3.6); on loopback and with 1 ms of delay each way
// between the cache and the server. For each: the time and requests to
// load it, the watches the server then holds, the requests per change and
// the time from a change's write until its event (the write's own round
// trip included), and the resync after a reconnection: its time from
// Reconnected to Resynced, its requests from the healed link on (the
// watches set again included). Run it with
// go test -tags bench -run TestBenchTree -v ./cache/
func TestBenchTree(t *testing.T) {
	const fan = 100 // the root, 100 children of 99 grandchildren each: 10,001 nodes
	writer := connect(t)
	ctx := testkit.Ctx(t, 10*time.Minute)
	mk(t, writer, "/b")
	for i := 0; i < fan; i++ {
		p := fmt.Sprintf("/b/n%02d", i)
		ops := []zkcoord.Op{zkcoord.CreateOp(p, []byte("x"), 0)}
		for j := 0; j < fan-1; j++ {
			ops = append(ops, zkcoord.CreateOp(fmt.Sprintf("%s/l%02d", p, j), []byte("leaf data"), 0))
		}
		if _, err := writer.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	chroot := testkit.Chroot(t)
	for _, delay := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprintf("delay=%v", delay), func(t *testing.T) { benchTree(t, writer, chroot, delay) })
	}
}

func benchTree(t *testing.T, writer *zkcoord.Session, chroot string, delay time.Duration) {
	const fan = 100
	ctx := testkit.Ctx(t, 10*time.Minute)
	bothWays(t, func(t *testing.T) {
		var sent atomic.Int64
		proxy := cluster.NewProxy(t)
		sess := testkit.Connect(t, proxy.Servers(), func(cfg *zkcoord.Config) {
			cfg.Chroot = chroot
			cfg.Dialer = func(network, addr string, timeout time.Duration) (net.Conn, error) {
				conn, err := net.DialTimeout(network, addr, timeout)
				if err != nil {
					return nil, err
				}
				return &countingConn{Conn: conn, n: &sent}, nil
			}
		})

		if err := proxy.Delay(delay); err != nil {
			t.Fatal(err)
		}
		before, start := sent.Load(), time.Now()
		c := started(t)(NewTree(sess, "/b"))
		t.Cleanup(func() { c.Close(testkit.Ctx(t, time.Minute)) })
		// next reads events until one of the form s; figures are timed
		// without polling.
		next := func(s string) {
			for ev := range c.Events() {
				if ev.String() == s {
					return
				}
			}
			t.Fatalf("events ended before %s", s)
		}
		next("Initialized")
		load, loadReq := time.Since(start), sent.Load()-before
		if c.Len() != fan*fan+1 {
			t.Fatalf("cached %d nodes, want %d", c.Len(), fan*fan+1)
		}
		t.Logf("load %d nodes: %v, %d requests (%.3f per node)", c.Len(), load.Round(time.Millisecond), loadReq, float64(loadReq)/float64(c.Len()))
		srv := cluster.Server(0)
		by, err := srv.Wchc(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total, err := srv.WatchCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("watches held: %d data watches of the session (wchc), %d watches in all (mntr zk_watch_count)", len(by[sess.ID()]), total)

		const changes = 200
		measure := func(what string, change func(k int) string) {
			before, start := sent.Load(), time.Now()
			for k := 0; k < changes; k++ {
				next(change(k))
			}
			el, req := time.Since(start), sent.Load()-before
			t.Logf("%s: %v per change, %.2f requests per change", what, (el / changes).Round(time.Microsecond), float64(req)/changes)
		}
		measure("update a leaf", func(k int) string {
			p := fmt.Sprintf("/b/n%02d/l%02d", k%fan, k/fan)
			set(t, writer, p, fmt.Sprintf("changed %d", k))
			return "Updated " + p
		})
		measure("add a leaf", func(k int) string {
			p := fmt.Sprintf("/b/n%02d/new%03d", k%fan, k)
			mk(t, writer, p)
			return "Added " + p
		})
		measure("remove a leaf", func(k int) string {
			p := fmt.Sprintf("/b/n%02d/new%03d", k%fan, k)
			del(t, writer, p)
			return "Removed " + p
		})

		if err := proxy.Cut(); err != nil {
			t.Fatal(err)
		}
		next("StateChanged Suspended")
		before = sent.Load()
		if err := proxy.Heal(); err != nil {
			t.Fatal(err)
		}
		next("StateChanged Reconnected")
		start = time.Now()
		next("Resynced")
		t.Logf("resync after a reconnection: %v from Reconnected to Resynced, %d requests from the healed link on", time.Since(start).Round(time.Millisecond), sent.Load()-before)
	})
}
