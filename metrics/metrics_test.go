package metrics_test

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/metrics"
	"github.com/zkcoord/zkcoord/zktest"
)

var cluster *zktest.Cluster

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster = c }))
}

// states records session states.
type states struct {
	metrics.Nop
	mu   sync.Mutex
	got  []zkcoord.State
	seen chan struct{} // one token per state
}

func (s *states) SessionState(st zkcoord.State) {
	s.mu.Lock()
	s.got = append(s.got, st)
	s.mu.Unlock()
	s.seen <- struct{}{}
}

// WatchSession reports every state of a Session, up to its end.
func TestWatchSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: cluster.Servers()})
	if err != nil {
		t.Fatal(err)
	}
	rec := states{seen: make(chan struct{}, 10)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		metrics.WatchSession(ctx, sess, &rec)
	}()
	<-rec.seen // the current state is reported first
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-done // returns once the Session has ended
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.Equal(rec.got, []zkcoord.State{zkcoord.Connected, zkcoord.Closed}) {
		t.Fatalf("got states %v", rec.got)
	}
}
