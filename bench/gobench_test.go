//go:build bench

package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zkcoord/zkcoord"
)

// The Go side of the workloads as ordinary Go benchmarks, for profiling and
// quick comparisons (no peers, no report):
//
//	cd bench && go test -tags bench -run '^$' -bench . .
//	cd bench && go test -tags bench -run '^$' -bench 'Lock/zkcoord' -cpuprofile cpu.out .
//
// Besides ns/op they report the server's requests, writes and watch
// notifications per operation.

// reportCounters charges the operations of a benchmark with the server
// counters they moved.
func reportCounters(b *testing.B, before counters, ops int) {
	b.Helper()
	after, err := readCounters(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	c := after.minus(before).div(float64(ops))
	b.ReportMetric(c.Packets, "requests/op")
	b.ReportMetric(c.Writes, "writes/op")
	b.ReportMetric(c.Notified, "notifications/op")
}

func mustCounters(b *testing.B) counters {
	b.Helper()
	c, err := readCounters(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkFloor(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run(gozkName, func(b *testing.B) {
		conn, err := connectRaw(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		dir := freshPath(gozkName, "floor")
		if err := ensureRaw(conn, dir); err != nil {
			b.Fatal(err)
		}
		before := mustCounters(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			p, err := conn.Create(dir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				b.Fatal(err)
			}
			if err := conn.Delete(p, -1); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportCounters(b, before, b.N)
	})
	b.Run(zkcoordName, func(b *testing.B) {
		sess, err := connect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close(ctx)
		dir := freshPath(zkcoordName, "floor")
		if err := sess.EnsurePath(ctx, dir); err != nil {
			b.Fatal(err)
		}
		before := mustCounters(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			p, err := sess.Create(ctx, dir+"/n-", nil, zkcoord.FlagEphemeralSequential)
			if err != nil {
				b.Fatal(err)
			}
			if err := sess.Delete(ctx, p, -1); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportCounters(b, before, b.N)
	})
}

// goLockers opens n clients of the named implementation, each with a
// locker on path(i); the returned func closes them.
func goLockers(ctx context.Context, b *testing.B, impl string, n int, path func(i int) string, shared bool) []locker {
	b.Helper()
	var ls []locker
	switch impl {
	case zkcoordName:
		k := n
		if shared {
			k = 1
		}
		ss, err := connectN(ctx, k)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { closeAll(ss) })
		for i := 0; i < n; i++ {
			l, err := zkcoordLocker(ss[i%k], path(i))
			if err != nil {
				b.Fatal(err)
			}
			ls = append(ls, l)
		}
	case gozkName:
		var conn *zk.Conn
		for i := 0; i < n; i++ {
			if conn == nil || !shared {
				c, err := connectRaw(ctx)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(c.Close)
				conn = c
			}
			ls = append(ls, gozkLocker(conn, path(i)))
		}
	}
	return ls
}

func BenchmarkLock(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, impl := range []string{zkcoordName, gozkName} {
		b.Run(impl, func(b *testing.B) {
			dir := freshPath(impl, "lock")
			l := goLockers(ctx, b, impl, 1, func(int) string { return dir }, true)[0]
			before := mustCounters(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := l.lock(ctx); err != nil {
					b.Fatal(err)
				}
				if err := l.unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportCounters(b, before, b.N)
		})
	}
}

// BenchmarkHandoff: one op is one handoff between 8 contending sessions.
func BenchmarkHandoff(b *testing.B) {
	ctx := context.Background()
	for _, impl := range []string{zkcoordName, gozkName} {
		b.Run(impl, func(b *testing.B) {
			dir := freshPath(impl, "handoff")
			ls := goLockers(ctx, b, impl, handoffN, func(int) string { return dir }, false)
			before := mustCounters(b)
			b.ResetTimer()
			out, err := handoff(ctx, ls, b.N, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			reportCounters(b, before, out.ops)
		})
	}
}

// BenchmarkDistinct: one op is one acquire+release; 64 goroutines on 64
// locks share one session.
func BenchmarkDistinct(b *testing.B) {
	ctx := context.Background()
	for _, impl := range []string{zkcoordName, gozkName} {
		b.Run(impl, func(b *testing.B) {
			dir := freshPath(impl, "distinct")
			ls := goLockers(ctx, b, impl, distinctN, func(i int) string { return fmt.Sprintf("%s/l%d", dir, i) }, true)
			per := (b.N + distinctN - 1) / distinctN
			before := mustCounters(b)
			b.ResetTimer()
			out, err := distinct(ctx, ls, per, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(out.values[0]*1e6, "ns/op")
			reportCounters(b, before, out.ops)
		})
	}
}

// BenchmarkFailover: one op is one graceful leader change.
func BenchmarkFailover(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("candidates=%d", n), func(b *testing.B) {
			z := &zkElection{}
			if err := z.setup(ctx, n); err != nil {
				b.Fatal(err)
			}
			defer z.teardown(ctx)
			before := mustCounters(b)
			var woken float64
			b.ResetTimer()
			for done := 0; done < b.N; {
				k := min(b.N-done, n/2)
				out, err := z.failover(ctx, k)
				if err != nil {
					b.Fatal(err)
				}
				woken += out.extra["woken_per_change"] * float64(k)
				done += k
				b.StopTimer()
				if err := z.campaign(ctx, k); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(woken/float64(b.N), "woken/op")
			reportCounters(b, before, b.N) // refills included
		})
	}
}

// BenchmarkRebalance: one op is one client joining and leaving again.
func BenchmarkRebalance(b *testing.B) {
	ctx := context.Background()
	for _, size := range []rebalanceSize{{clients: 10, resources: 100}, {clients: 50, resources: 1000}} {
		for _, mode := range rebalanceModes {
			b.Run(fmt.Sprintf("%s/%s", mode, size.label()), func(b *testing.B) {
				g := &zkGroup{size: size, mode: mode}
				if err := g.setup(ctx); err != nil {
					b.Fatal(err)
				}
				defer g.teardown(ctx)
				var paused float64
				before := mustCounters(b)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for _, f := range []func(context.Context) (stepOut, error){g.join, g.leave} {
						out, err := f(ctx)
						if err != nil {
							b.Fatal(err)
						}
						paused += out.extra["paused"]
					}
				}
				b.StopTimer()
				b.ReportMetric(paused/float64(b.N), "paused/op")
				reportCounters(b, before, b.N)
			})
		}
	}
}
