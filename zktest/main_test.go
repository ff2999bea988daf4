package zktest

import (
	"context"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: a
// cluster's cleanup must stop everything it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testCtx returns a context that ends after d or when the test ends.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// client is a go-zookeeper connection whose session events are tracked.
type client struct {
	*zk.Conn
	rec    *SessionRecorder
	states chan zk.State
}

// connectWith connects a go-zookeeper client to servers through rec (a
// plain recorder when nil) and waits for a session.
func connectWith(t testing.TB, servers []string, timeout time.Duration, rec *SessionRecorder) *client {
	t.Helper()
	if rec == nil {
		rec = NewSessionRecorder(nil)
	}
	c := &client{rec: rec, states: make(chan zk.State, 1000)}
	conn, _, err := zk.Connect(servers, timeout,
		zk.WithDialer(rec.Dial),
		zk.WithLogger(nopLogger{}),
		zk.WithEventCallback(func(ev zk.Event) {
			if ev.Type == zk.EventSession {
				select {
				case c.states <- ev.State:
				default:
				}
			}
		}))
	if err != nil {
		t.Fatalf("zk.Connect: %v", err)
	}
	c.Conn = conn
	t.Cleanup(conn.Close)
	c.waitState(t, zk.StateHasSession, 30*time.Second)
	return c
}

// waitState waits until the client reports state. With ZKTEST_DUMP set, a
// timeout also prints every goroutine's stack.
func (c *client) waitState(t testing.TB, want zk.State, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case s := <-c.states:
			if s == want {
				return
			}
			seen = append(seen, s.String())
		case <-timer.C:
			if os.Getenv("ZKTEST_DUMP") != "" {
				pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			}
			t.Fatalf("client did not reach %v within %v (saw %s)", want, d, strings.Join(seen, ", "))
		}
	}
}

// sessionTimeout is what test clients ask for: long enough that a starved
// server on a loaded machine does not make them give up on a connection.
const sessionTimeout = 15 * time.Second
