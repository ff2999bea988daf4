package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

// follower reads an event stream and remembers the newest view of each
// recipe.
type follower struct {
	ch     <-chan *console.View
	latest map[string]*console.View
}

// stream follows /api/events.
func stream(t *testing.T, url string) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	ch := make(chan *console.View, 10000)
	go func() {
		defer res.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 64<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
			} else if d, ok := strings.CutPrefix(line, "data: "); ok && event == "view" {
				var v console.View
				if json.Unmarshal([]byte(d), &v) == nil {
					ch <- &v
				}
			}
		}
	}()
	return &follower{ch: ch, latest: map[string]*console.View{}}
}

// await reads the stream until the newest view of path satisfies cond.
func await(t *testing.T, f *follower, path string, cond func(*console.View) bool) {
	t.Helper()
	if v := f.latest[path]; v != nil && cond(v) {
		return
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case v, ok := <-f.ch:
			if !ok {
				t.Fatalf("stream ended before a view of %s", path)
			}
			f.latest[v.Path] = v
			if v.Path == path && cond(v) {
				return
			}
		case <-timeout:
			t.Fatalf("no matching view of %s within 30s", path)
		}
	}
}

// TestBrowsersShareWatches opens many event streams, one of which never
// reads: the server holds as many watches as with one stream, and every
// reading stream sees every change.
func TestBrowsersShareWatches(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	s1, s2 := connect(t), connect(t)
	m1, _ := lock.NewMutex(s1, "/share/lock")
	m2, _ := lock.NewMutex(s2, "/share/lock")
	if _, err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := m2.Lock(ctx); got <- err }()
	cnt, _ := counter.New(s1, "/share/count")
	if _, err := cnt.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}

	srv := serve(t, connect(t), console.Options{})
	first := stream(t, srv.URL)
	await(t, first, "/share/lock", func(v *console.View) bool { return len(v.Lock.Waiters) == 1 })
	await(t, first, "/share/count", func(*console.View) bool { return true })
	watches := func() int {
		n, err := cluster.Server(0).WatchCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := watches()

	// A stalled browser: connected, never reading.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", nil)
	stalled, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Body.Close()
	streams := []*follower{first}
	for range 5 {
		ch := stream(t, srv.URL)
		await(t, ch, "/share/lock", func(v *console.View) bool { return len(v.Lock.Waiters) == 1 })
		streams = append(streams, ch)
	}
	if after := watches(); after != before {
		t.Fatalf("%d watches with 7 streams, %d with one", after, before)
	}

	if err := m1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	const adds = 100
	for range adds {
		if _, err := cnt.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	holder := fmt.Sprintf("0x%x", s2.ID())
	for _, ch := range streams {
		await(t, ch, "/share/lock", func(v *console.View) bool {
			return len(v.Lock.Holders) == 1 && v.Lock.Holders[0].Session == holder
		})
		await(t, ch, "/share/count", func(v *console.View) bool { return v.Counter.Value == adds+1 })
	}
}
