package zkcoord_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
)

// syncBuffer is a log destination that tells when a line arrives.
type syncBuffer struct {
	mu    sync.Mutex
	b     strings.Builder
	wrote chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Write(p)
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A refused connection is reported with its reason as soon as it happens,
// not only when Connect gives up.
func TestConnectReportsRefusedServerAtOnce(t *testing.T) {
	buf := &syncBuffer{wrote: make(chan struct{}, 1)}
	logger := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: []string{"127.0.0.1:1"}, Logger: logger})
		errc <- err
	}()
	select {
	case <-buf.wrote:
	case err := <-errc:
		t.Fatalf("Connect returned %v before reporting anything", err)
	}
	if out := buf.String(); !strings.Contains(out, "127.0.0.1:1") || !strings.Contains(out, "refused") {
		t.Fatalf("the report does not name the server and the reason: %s", out)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
}
