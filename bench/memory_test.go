//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

// Memory per client is measured in a fresh process per implementation and
// round: the growth of resident memory while it opens clients, each with
// its own ZooKeeper session holding one lock, divided by their number.

const mMemory = "memory"

// memProbeEnv carries a memProbe to a re-executed test binary.
const memProbeEnv = "ZKBENCH_MEMPROBE"

type memProbe struct {
	Kind    string   `json:"kind"` // zkcoordName or gozkName
	Clients int      `json:"clients"`
	Servers []string `json:"servers"`
	Path    string   `json:"path"`
}

func memClients(quick bool) (clients, rounds int) {
	if quick {
		return 10, 1
	}
	return 100, 2
}

// TestMemProbe runs only in a re-executed test binary: it opens the
// clients, measures, and prints one line "memprobe {json}".
func TestMemProbe(t *testing.T) {
	v := os.Getenv(memProbeEnv)
	if v == "" {
		t.Skip("runs only as a memory probe")
	}
	var p memProbe
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		t.Fatal(err)
	}
	out, err := p.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	fmt.Printf("memprobe %s\n", b)
}

// memClient opens one client holding one lock; the returned func closes it.
func (p memProbe) memClient(ctx context.Context, path string) (func(), error) {
	switch p.Kind {
	case zkcoordName:
		s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: p.Servers, SessionTimeout: sessionTimeout})
		if err != nil {
			return nil, err
		}
		m, err := lock.NewMutex(s, path)
		if err != nil {
			return nil, err
		}
		if _, err := m.Lock(ctx); err != nil {
			return nil, err
		}
		return func() {
			m.Unlock(ctx)
			s.Close(ctx)
		}, nil
	case gozkName:
		conn, _, err := zk.Connect(p.Servers, sessionTimeout, zk.WithLogger(quiet{}))
		if err != nil {
			return nil, err
		}
		l := zk.NewLock(conn, path, zk.WorldACL(zk.PermAll))
		if err := l.Lock(); err != nil {
			return nil, err
		}
		return func() {
			l.Unlock()
			conn.Close()
		}, nil
	}
	return nil, fmt.Errorf("unknown kind %q", p.Kind)
}

func (p memProbe) run(ctx context.Context) (map[string]float64, error) {
	for i := 0; i < 3; i++ { // warm up code paths and pools
		closeFn, err := p.memClient(ctx, fmt.Sprintf("%s/warm%d", p.Path, i))
		if err != nil {
			return nil, err
		}
		closeFn()
	}
	rss0, heap0, g0 := goMemory()
	var closers []func()
	for i := 0; i < p.Clients; i++ {
		closeFn, err := p.memClient(ctx, fmt.Sprintf("%s/l%d", p.Path, i))
		if err != nil {
			return nil, err
		}
		closers = append(closers, closeFn)
	}
	rss1, heap1, g1 := goMemory()
	for _, c := range closers {
		c()
	}
	n := float64(p.Clients)
	return map[string]float64{
		"rss_kib_per_client":        float64(rss1-rss0) / n,
		"heap_kib_per_client":       float64(heap1-heap0) / 1024 / n,
		"goroutines_per_client":     float64(g1-g0) / n,
		"clients":                   n,
		"rss_kib_after_all_clients": float64(rss1),
	}, nil
}

// goMemory returns resident memory (KiB), heap and stacks in use (bytes)
// and goroutines, after a collection.
func goMemory() (rss int64, heap uint64, goroutines int) {
	runtime.GC()
	debug.FreeOSMemory()
	time.Sleep(200 * time.Millisecond) // let the scavenger return memory
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return rssKiB(), m.HeapInuse + m.StackInuse, runtime.NumGoroutine()
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return -1
}

// goProbe re-executes the test binary as a memory probe.
func goProbe(ctx context.Context, kind string, clients int) (stepOut, error) {
	p := memProbe{Kind: kind, Clients: clients, Servers: server.Servers(), Path: freshPath(kind, "memory")}
	b, _ := json.Marshal(p)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMemProbe$", "-test.count=1")
	cmd.Env = append(os.Environ(), memProbeEnv+"="+string(b))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return stepOut{}, fmt.Errorf("memory probe: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "memprobe "); ok {
			var m map[string]float64
			if err := json.Unmarshal([]byte(rest), &m); err != nil {
				return stepOut{}, err
			}
			return stepOut{values: []float64{m["rss_kib_per_client"]}, ops: clients, extra: m}, nil
		}
	}
	return stepOut{}, fmt.Errorf("memory probe: no result in\n%s", out)
}

func memorySuite(e *env) *suite {
	clients, rounds := memClients(e.quick)
	s := &suite{id: "memory", rounds: rounds, warm: -1}
	for _, kind := range []string{zkcoordName, gozkName} {
		s.impls = append(s.impls, &impl{
			name: kind,
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, mMemory, func() (stepOut, error) { return goProbe(ctx, kind, clients) })
			},
		})
	}
	for _, start := range e.peerStarters() {
		s.impls = append(s.impls, &impl{
			name: start.name,
			round: func(ctx context.Context, rec *recorder) error {
				return rec.step(ctx, mMemory, func() (stepOut, error) {
					p, err := start.start(ctx)
					if err != nil {
						return stepOut{}, err
					}
					defer p.close()
					r, err := p.call(ctx, 10*time.Minute, "mem", map[string]any{"path": freshPath(start.name, "memory"), "clients": clients})
					if err != nil {
						return stepOut{}, err
					}
					return stepOut{values: []float64{r.Extra["rss_kib_per_client"]}, ops: clients, extra: r.Extra}, nil
				})
			},
		})
	}
	return s
}
