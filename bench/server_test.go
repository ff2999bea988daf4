//go:build bench

package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkcoord/zkcoord"
)

// sessionTimeout is what every client of every implementation asks for:
// long enough that idle clients ping rarely (their pings count as requests
// in the server's counters), short enough to be a realistic setting.
const sessionTimeout = 30 * time.Second

// counters are the server counters a step is charged with.
type counters struct {
	Packets  float64 `json:"packets"`  // requests received, pings included
	Writes   float64 `json:"writes"`   // of which writes (transactions)
	Notified float64 `json:"notified"` // watch notifications sent
}

func (c counters) minus(o counters) counters {
	return counters{Packets: c.Packets - o.Packets, Writes: c.Writes - o.Writes, Notified: c.Notified - o.Notified}
}

func (c counters) div(n float64) counters {
	if n <= 0 {
		return counters{}
	}
	return counters{Packets: c.Packets / n, Writes: c.Writes / n, Notified: c.Notified / n}
}

// watchKinds are the mntr summaries of watch notifications, one per kind
// of event; their _sum is the number of watchers triggered.
var watchKinds = []string{"node_created", "node_deleted", "node_changed", "node_children"}

// readCounters reads the counters of every server with mntr and adds
// them up. Each mntr request itself counts as one received packet, which
// minus() of two readings leaves in: recorder.step takes it out.
func readCounters(ctx context.Context) (counters, error) {
	var sum counters
	for i := range server.Len() {
		c, err := readServerCounters(ctx, i)
		if err != nil {
			return sum, err
		}
		sum.Packets += c.Packets
		sum.Writes += c.Writes
		sum.Notified += c.Notified
	}
	return sum, nil
}

func readServerCounters(ctx context.Context, i int) (counters, error) {
	m, err := server.Server(i).Mntr(ctx)
	if err != nil {
		return counters{}, err
	}
	num := func(k string) (float64, error) {
		v, ok := m[k]
		if !ok {
			return 0, nil // a summary appears once it has a value
		}
		return strconv.ParseFloat(v, 64)
	}
	var c counters
	if c.Packets, err = num("zk_packets_received"); err != nil {
		return c, err
	}
	if c.Writes, err = num("zk_cnt_updatelatency"); err != nil {
		return c, err
	}
	for _, k := range watchKinds {
		v, err := num("zk_sum_" + k + "_watch_count")
		if err != nil {
			return c, err
		}
		c.Notified += v
	}
	return c, nil
}

// serverVersion returns the version the server reports.
func serverVersion(ctx context.Context) string {
	m, err := server.Server(0).Mntr(ctx)
	if err != nil {
		return "unknown"
	}
	v, _, _ := strings.Cut(m["zk_version"], ",")
	return strings.TrimSuffix(strings.TrimSpace(v), "-${mvngit.commit.id}")
}

// connect opens a zkcoord Session to the active setting's servers.
func connect(ctx context.Context) (*zkcoord.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	servers, err := clientServers()
	if err != nil {
		return nil, err
	}
	return zkcoord.Connect(ctx, zkcoord.Config{Servers: servers, SessionTimeout: sessionTimeout})
}

// connectN opens n Sessions, a few at a time.
func connectN(ctx context.Context, n int) ([]*zkcoord.Session, error) {
	out := make([]*zkcoord.Session, n)
	err := forEach(ctx, n, 16, func(ctx context.Context, i int) error {
		s, err := connect(ctx)
		out[i] = s
		return err
	})
	if err != nil {
		closeAll(out)
		return nil, err
	}
	return out, nil
}

func closeAll(ss []*zkcoord.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = forEach(ctx, len(ss), 32, func(ctx context.Context, i int) error {
		if ss[i] != nil {
			ss[i].Close(ctx)
		}
		return nil
	})
}

// connectRaw opens a plain go-zookeeper connection and waits for its
// session.
func connectRaw(ctx context.Context) (*zk.Conn, error) {
	has := make(chan struct{})
	var once atomic.Bool
	servers, err := clientServers()
	if err != nil {
		return nil, err
	}
	conn, _, err := zk.Connect(servers, sessionTimeout,
		zk.WithLogger(quiet{}),
		zk.WithEventCallback(func(ev zk.Event) {
			if ev.State == zk.StateHasSession && once.CompareAndSwap(false, true) {
				close(has)
			}
		}))
	if err != nil {
		return nil, err
	}
	select {
	case <-has:
		return conn, nil
	case <-ctx.Done():
		conn.Close()
		return nil, ctx.Err()
	case <-time.After(60 * time.Second):
		conn.Close()
		return nil, fmt.Errorf("go-zookeeper: no session after 60s")
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// ensureRaw creates path and its parents through a go-zookeeper Conn.
func ensureRaw(conn *zk.Conn, path string) error {
	p := ""
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		p += "/" + part
		_, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && err != zk.ErrNodeExists {
			return err
		}
	}
	return nil
}

// forEach runs f(0..n-1) with at most par calls at once and returns the
// first error.
func forEach(ctx context.Context, n, par int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, par)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs <- context.Cause(ctx)
			continue
		}
		go func() {
			defer func() { <-sem }()
			if err := f(ctx, i); err != nil {
				cancel(err)
				errs <- err
				return
			}
			errs <- nil
		}()
	}
	var first error
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

var pathSeq atomic.Int64

// freshPath returns a new path under the benchmark's root for one
// implementation's use of one workload.
func freshPath(impl, workload string) string {
	clean := strings.NewReplacer(" ", "-", "/", "-", ".", "", "(", "", ")", "").Replace(strings.ToLower(impl))
	return fmt.Sprintf("/bench/%s/%s-%d", workload, clean, pathSeq.Add(1))
}
