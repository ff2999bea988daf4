package console_test

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/counter"
	"github.com/zkcoord/zkcoord/internal/recipe"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/lock"
)

// TestDisconnectedShown: while the console's Session is out of contact
// with ZooKeeper, the status says so and the last views stay; once in
// contact again, the status says that too, and what changed meanwhile is
// shown.
func TestDisconnectedShown(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	writer := connect(t)
	cnt, _ := counter.New(writer, "/cut/count")
	if _, err := cnt.Add(ctx, 3); err != nil {
		t.Fatal(err)
	}
	proxy := cluster.NewProxy(t)
	srv := serve(t, testkit.Connect(t, proxy.Servers()), console.Options{})
	waitView(t, srv, "/cut/count", func(v *console.View) error { return wantCount(v, 3) })
	if st := waitStatus(t, srv, true); st.Failure != "" {
		t.Fatalf("status %+v", st)
	}

	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, srv, false)
	st, err := getState(t, srv)
	if err != nil || st.Views["/cut/count"] == nil {
		t.Fatalf("the last view is gone while disconnected: %+v, %v", st.Views, err)
	}
	if _, err := cnt.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, srv, true)
	waitView(t, srv, "/cut/count", func(v *console.View) error { return wantCount(v, 4) })
}

// TestResume: after its Session ended, the console carries on with a new
// one: the event streams stay open, the failure is cleared, and what changed
// meanwhile is published, on the timeline too.
func TestResume(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	writer := connect(t)
	cnt, _ := counter.New(writer, "/resume/count")
	if _, err := cnt.Add(ctx, 1); err != nil {
		t.Fatal(err)
	}
	m, _ := lock.NewMutex(writer, "/resume/lock")
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	first := connect(t)
	srv, c := serveConsole(t, first, console.Options{})
	events := stream(t, srv.URL)
	await(t, events, "/resume/lock", func(v *console.View) bool { return len(v.Lock.Holders) == 1 })
	await(t, events, "/resume/count", func(v *console.View) bool { return wantCount(v, 1) == nil })

	if err := cluster.ExpireSession(ctx, first.ID(), first.Password()); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 60*time.Second, "the end of the session shown", func() error {
		st, err := getState(t, srv)
		if err != nil {
			return err
		}
		if st.Status.Connected || !strings.Contains(st.Status.Failure, "session ended") {
			return fmt.Errorf("status %+v", st.Status)
		}
		return nil
	})
	// Meanwhile: the counter moves, the lock is released and its node
	// deleted.
	if _, err := cnt.Add(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recipe.EnsureDeleted(ctx, writer, "/resume/lock"); err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		t.Fatal(err)
	}
	st, err := getState(t, srv)
	if err != nil || wantCount(st.Views["/resume/count"], 1) != nil || st.Views["/resume/lock"] == nil {
		t.Fatalf("the last known views changed before the console resumed: %+v, %v", st.Views, err)
	}

	if err := c.Resume(connect(t)); err != nil {
		t.Fatal(err)
	}
	await(t, events, "/resume/count", func(v *console.View) bool { return wantCount(v, 7) == nil })
	testkit.WaitFor(t, 30*time.Second, "the lock gone, on the timeline too", func() error {
		st, err := getState(t, srv)
		switch {
		case err != nil:
			return err
		case !st.Status.Connected || st.Status.Failure != "":
			return fmt.Errorf("status %+v", st.Status)
		case st.Views["/resume/lock"] != nil:
			return errors.New("the lock is still shown")
		case !slices.ContainsFunc(st.Events, func(e console.Event) bool { return e.Path == "/resume/lock" && e.Text == "gone" }):
			return fmt.Errorf("timeline %+v", st.Events)
		}
		return nil
	})
}

// waitStatus waits until the console's status says it is connected, or
// not, and returns it.
func waitStatus(t *testing.T, srv *httptest.Server, connected bool) console.Status {
	t.Helper()
	var st state
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("connected: %v", connected), func() error {
		var err error
		if st, err = getState(t, srv); err != nil {
			return err
		}
		if st.Status.Connected != connected {
			return fmt.Errorf("status %+v", st.Status)
		}
		return nil
	})
	return st.Status
}

// wantCount checks that v is a counter view of value n.
func wantCount(v *console.View, n int32) error {
	if v == nil || v.Counter == nil || v.Counter.Value != n {
		return fmt.Errorf("counter view %+v", v)
	}
	return nil
}
