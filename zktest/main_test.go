package zktest

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkcoord/zkcoord/internal/wire"
	"github.com/zkcoord/zkcoord/internal/zkconn"
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

// client is a connection of zkcoord's own client whose session events are
// tracked; its methods are the few calls these tests make.
type client struct {
	*zkconn.Client
	rec    *SessionRecorder
	states chan wire.State
}

// The states a test waits for.
const (
	stateHasSession   = wire.StateSyncConnected
	stateDisconnected = wire.StateDisconnected
	stateExpired      = wire.StateExpired
)

var openACL = wire.WorldACL(wire.PermAll)

const flagEphemeral = int32(wire.ModeEphemeral)

// connectWith connects a client to servers through rec (a plain recorder
// when nil) and waits for a session.
func connectWith(t testing.TB, servers []string, timeout time.Duration, rec *SessionRecorder) *client {
	t.Helper()
	if rec == nil {
		rec = NewSessionRecorder(nil)
	}
	c := &client{rec: rec, states: make(chan wire.State, 1000)}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := time.Minute
		if dl, ok := ctx.Deadline(); ok {
			d = time.Until(dl)
		}
		return rec.Dial(network, addr, d)
	}
	conn, err := zkconn.Dial(testCtx(t, 30*time.Second), zkconn.Config{Servers: servers, SessionTimeout: timeout, Dial: dial})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	conn.Session().Notify(func(e zkconn.Event) {
		select {
		case c.states <- e.State:
		default:
		}
	})
	c.Client = conn
	t.Cleanup(c.Close)
	c.waitState(t, stateHasSession, 30*time.Second)
	return c
}

// callCtx bounds one call of a test client.
func callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

func (c *client) Close() {
	ctx, cancel := callCtx()
	defer cancel()
	c.Client.Close(ctx)
}

func (c *client) Create(path string, data []byte, flags int32, acl []wire.ACL) (string, error) {
	ctx, cancel := callCtx()
	defer cancel()
	r, _, err := c.Client.Create(ctx, path, data, acl, wire.CreateMode(flags))
	return r.Path, err
}

func (c *client) Get(path string) ([]byte, wire.Stat, error) {
	ctx, cancel := callCtx()
	defer cancel()
	r, _, _, err := c.Client.GetData(ctx, path, false)
	return r.Data, r.Stat, err
}

func (c *client) GetW(path string) ([]byte, wire.Stat, *zkconn.Watch, error) {
	ctx, cancel := callCtx()
	defer cancel()
	r, _, w, err := c.Client.GetData(ctx, path, true)
	return r.Data, r.Stat, w, err
}

func (c *client) ChildrenW(path string) ([]string, wire.Stat, *zkconn.Watch, error) {
	ctx, cancel := callCtx()
	defer cancel()
	r, _, w, err := c.Client.GetChildren(ctx, path, true)
	return r.Children, r.Stat, w, err
}

func (c *client) Exists(path string) (bool, wire.Stat, error) {
	ctx, cancel := callCtx()
	defer cancel()
	st, _, _, err := c.Client.Exists(ctx, path, false)
	if errors.Is(err, wire.ErrNoNode) {
		return false, st, nil
	}
	return err == nil, st, err
}

// waitState waits until the client reports state. With ZKTEST_DUMP set, a
// timeout also prints every goroutine's stack.
func (c *client) waitState(t testing.TB, want wire.State, d time.Duration) {
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
