package zkconn

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkcoord/zkcoord/internal/wire"
)

// TestMain fails the package if goroutines outlive the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("os/signal.signal_recv"))
}

// testCtx returns a context that ends with the test or after d.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// dial opens a client and closes it when the test ends.
func dial(t *testing.T, servers []string, timeout time.Duration) *Client {
	t.Helper()
	c, err := Dial(testCtx(t, 30*time.Second), Config{Servers: servers, SessionTimeout: timeout})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

var openACL = wire.WorldACL(wire.PermAll)

// next returns a watch's next event, failing the test after 20 s.
func next(t *testing.T, w *Watch) Event {
	t.Helper()
	e, err := w.Next(testCtx(t, 20*time.Second))
	if err != nil {
		t.Fatalf("waiting for an event on %q: %v", w.Path(), err)
	}
	return e
}

// nextNode returns a watch's next node event, skipping connection events.
func nextNode(t *testing.T, w *Watch) Event {
	t.Helper()
	for {
		if e := next(t, w); e.Type != wire.EventNone {
			return e
		}
	}
}

// waitState waits for the session watch to report state.
func waitState(t *testing.T, c *Client, state wire.State) {
	t.Helper()
	for {
		if e := next(t, c.Session()); e.State == state {
			return
		}
	}
}
