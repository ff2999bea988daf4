//go:build unix

package supervise

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// stubborn is a command that ignores SIGTERM, and so do the processes it
// starts.
const stubborn = "trap '' TERM; echo ready; while :; do sleep 0.1; done"

// start starts sh -c script; the test's cleanup kills it.
func start(t *testing.T, script string) *Child {
	t.Helper()
	c, err := Start(Spec{Name: "script", Argv: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(0, nil, nil) })
	return c
}

// startReady starts sh -c script and waits until the script has written
// "ready" on its standard output (once it has set its traps).
func startReady(t *testing.T, script string) *Child {
	t.Helper()
	r, w := io.Pipe()
	c, err := Start(Spec{Name: "script", Argv: []string{"sh", "-c", script}, Stdout: w})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop(0, nil, nil)
		r.Close()
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(r)
		ok := sc.Scan() && sc.Text() == "ready"
		ready <- ok
		io.Copy(io.Discard, r)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("%q did not write ready", script)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%q not ready after 30s", script)
	}
	return c
}

// A child's status is its exit code, or 128 plus the number of the signal
// that killed it, and Describe says which.
func TestStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		script string
		status int
		how    string
	}{
		{"true", 0, "exit status 0"},
		{"exit 3", 3, "exit status 3"},
		{"kill -KILL $$", 137, "killed by SIGKILL"},
	}
	for _, c := range cases {
		child := start(t, c.script)
		if got, how := child.Status(), child.Describe(); got != c.status || how != c.how {
			t.Errorf("%q: status %d (%s), want %d (%s)", c.script, got, how, c.status, c.how)
		}
	}
}

// A command that cannot be started is an error, not a child.
func TestStartFails(t *testing.T) {
	t.Parallel()
	if _, err := Start(Spec{Name: "nothing"}); err == nil {
		t.Error("an empty command started")
	}
	_, err := Start(Spec{Name: "missing", Argv: []string{"zkcoord-no-such-command"}})
	if err == nil || !strings.Contains(err.Error(), "starting missing") {
		t.Errorf("a missing command: %v", err)
	}
}

// Stop asks with SIGTERM first: a command that exits on it exits with its
// own status, without waiting for the grace period.
func TestStopTerminates(t *testing.T) {
	t.Parallel()
	c := startReady(t, "trap 'exit 7' TERM; echo ready; while :; do sleep 0.1; done")
	began := time.Now()
	c.Stop(time.Minute, nil, nil)
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("Stop took %v for a command that exits on SIGTERM", d)
	}
	if got := c.Status(); got != 7 {
		t.Errorf("status %d, want 7 (the command's own)", got)
	}
}

// A command that ignores SIGTERM is killed once the grace period is over,
// not before; a grace of zero kills at once.
func TestStopKillsAfterGrace(t *testing.T) {
	t.Parallel()
	const grace = 500 * time.Millisecond
	c := startReady(t, stubborn)
	began := time.Now()
	c.Stop(grace, nil, nil)
	if d := time.Since(began); d < grace {
		t.Errorf("killed after %v, before the grace of %v", d, grace)
	}
	if got := c.Status(); got != 137 {
		t.Errorf("status %d, want 137 (SIGKILL)", got)
	}
	c = startReady(t, stubborn)
	c.Stop(0, nil, nil)
	if got := c.Status(); got != 137 {
		t.Errorf("status %d after Stop(0), want 137 (SIGKILL)", got)
	}
}

// When the ownership a child runs under ends in a way that may let someone
// else in, Stop kills at once, whatever grace was asked.
func TestStopKillsWhenOwnershipEnds(t *testing.T) {
	t.Parallel()
	c := startReady(t, stubborn)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("the lock node was deleted"))
	stopWithin(t, c, 30*time.Second, nil, ContextOwnership{Ctx: ctx})
	if got := c.Status(); got != 137 {
		t.Errorf("status %d, want 137 (SIGKILL)", got)
	}
}

// Cut off from ZooKeeper, a Session's expiry deadline stops moving: Stop
// kills the child before the server may expire the session, whatever grace
// was asked.
func TestStopEndsBeforeExpiry(t *testing.T) {
	t.Parallel()
	proxy := cluster.NewProxy(t)
	sess := connect(t, proxy.Servers())
	c := startReady(t, stubborn)
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	stopped := stopWithin(t, c, 30*time.Second, sess, nil)
	if deadline := sess.ExpiryDeadline(); !stopped.Before(deadline) {
		t.Errorf("the child was stopped at %v, %v after the server may expire the session",
			stopped.Format(time.StampMilli), stopped.Sub(deadline))
	}
	if got := c.Status(); got != 137 {
		t.Errorf("status %d, want 137 (SIGKILL)", got)
	}
	if err := proxy.Heal(); err != nil {
		t.Error(err)
	}
}

// stopWithin stops c with a grace of an hour under sess and own, and fails the test
// (then kills c) if that takes longer than within. It returns when Stop
// returned.
func stopWithin(t *testing.T, c *Child, within time.Duration, sess *zkcoord.Session, own zkcoord.Ownership) time.Time {
	t.Helper()
	stopped := make(chan time.Time, 1)
	go func() {
		c.Stop(time.Hour, sess, own)
		stopped <- time.Now()
	}()
	select {
	case at := <-stopped:
		return at
	case <-time.After(within):
		t.Errorf("Stop still waits after %v", within)
		c.Stop(0, nil, nil)
		return <-stopped
	}
}

// LossGrace gives a child the rest of the time before the session may
// expire after a loss of contact, its whole grace after an orderly close,
// and nothing after any other loss.
func TestLossGrace(t *testing.T) {
	t.Parallel()
	sess := connect(t, cluster.Servers())
	const grace = time.Hour
	if g := LossGrace(sess, zkcoord.ErrSessionLost, grace); g <= 0 || g >= sess.Timeout() {
		t.Errorf("after ErrSessionLost: %v, want more than 0 and less than the session timeout %v", g, sess.Timeout())
	}
	if g := LossGrace(sess, zkcoord.ErrSessionLost, time.Millisecond); g != time.Millisecond {
		t.Errorf("after ErrSessionLost with a grace of 1ms: %v", g)
	}
	for _, c := range []struct {
		cause error
		want  time.Duration
	}{
		{zkcoord.ErrSessionClosed, grace},
		{zkcoord.ErrSessionExpired, 0},
		{errors.New("the lock node was deleted"), 0},
	} {
		if g := LossGrace(sess, c.cause, grace); g != c.want {
			t.Errorf("after %v: %v, want %v", c.cause, g, c.want)
		}
	}
}

// connect opens a Session with a 4s timeout; the test's cleanup closes it.
func connect(t *testing.T, servers []string) *zkcoord.Session {
	t.Helper()
	return testkit.Open(t, zkcoord.Config{Servers: servers, SessionTimeout: 4 * time.Second})
}
