package election_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
)

// A candidate in a separate OS process: the test binary re-executed with
// helperEnv set runs only TestHelperCandidate.
const (
	helperEnv        = "ELECTION_TEST_HELPER"
	helperServersEnv = "ELECTION_TEST_SERVERS"
	helperPathEnv    = "ELECTION_TEST_PATH"
	helperTimeoutEnv = "ELECTION_TEST_TIMEOUT"
)

// TestHelperCandidate is not a test: it campaigns, prints
// "LEADER <token> <negotiated timeout ms>" and waits to be killed.
func TestHelperCandidate(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("runs only as a helper process")
	}
	timeout, _ := time.ParseDuration(os.Getenv(helperTimeoutEnv))
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{
		Servers:        strings.Split(os.Getenv(helperServersEnv), ","),
		SessionTimeout: timeout,
	})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	e, err := election.New(sess, os.Getenv(helperPathEnv), election.WithID("helper"))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	l, err := e.Campaign(ctx)
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Printf("LEADER %d %d\n", l.Token(), sess.Timeout().Milliseconds())
	<-l.Done()
	fmt.Println("LOST", l.Err())
	os.Exit(2)
}

// startHelper runs a helper candidate and waits until it leads.
func startHelper(t *testing.T, ctx context.Context, servers []string, path string, timeout time.Duration) (cmd *exec.Cmd, token int64, negotiated time.Duration) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^TestHelperCandidate$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		helperEnv+"=1",
		helperServersEnv+"="+strings.Join(servers, ","),
		helperPathEnv+"="+path,
		helperTimeoutEnv+"="+timeout.String(),
	)
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("helper exited before leading")
			}
			f := strings.Fields(line)
			if len(f) == 3 && f[0] == "LEADER" {
				token, _ = strconv.ParseInt(f[1], 10, 64)
				ms, _ := strconv.Atoi(f[2])
				go func() { // drain the rest
					for range lines {
					}
				}()
				return cmd, token, time.Duration(ms) * time.Millisecond
			}
			if strings.HasPrefix(line, "ERROR") {
				t.Fatalf("helper: %s", line)
			}
		case <-ctx.Done():
			t.Fatalf("helper did not lead: %v", ctx.Err())
		}
	}
}

// TestLeaderKilled: the leader is a separate process killed with SIGKILL;
// a new leader is elected within the session timeout plus two ticks.
func TestLeaderKilled(t *testing.T) {
	ctx := testCtx(t, long)
	path := uniquePath(t)
	cmd, helperToken, timeout := startHelper(t, ctx, shared.Servers(), path, 4*time.Second)

	sess := connect(t, shared.Servers())
	e := newElection(t, sess, path, election.WithID("survivor"))
	c, err := e.Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Role() != election.Following || c.State().FollowingID != "helper" {
		t.Fatalf("survivor: %+v", c.State())
	}
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Elected():
	case <-time.After(long):
		children, _, err := sess.Children(ctx, path)
		w, _ := shared.Server(0).Wchc(ctx)
		t.Fatalf("survivor not elected: state %+v; children %v (%v); session 0x%x state %v; watches %v",
			c.State(), children, err, sess.ID(), sess.State(), w[sess.ID()])
	}
	took := time.Since(killed)
	bound := timeout + 2*shared.TickTime()
	t.Logf("new leader %v after SIGKILL (session timeout %v, bound %v)", took, timeout, bound)
	if took > bound {
		t.Fatalf("new leader after %v, more than the session timeout plus two ticks (%v)", took, bound)
	}
	if got := c.Leadership().Token(); got <= helperToken {
		t.Fatalf("token %d after the killed leader's %d", got, helperToken)
	}
	c.Resign(ctx)
}
