//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/zktest"
)

// The one-shot commands: counter, queue, barrier.
func TestOperatorCommands(t *testing.T) {
	t.Parallel()
	base := unique(t)

	counter := base + "/counter"
	mustZkc(t, "counter", "set", counter, "40")
	if out := mustZkc(t, "counter", "get", counter); out != "40\n" {
		t.Errorf("counter get: %q", out)
	}
	if out := mustZkc(t, "counter", "add", counter, "2"); out != "42\n" {
		t.Errorf("counter add: %q", out)
	}
	if out := mustZkc(t, "counter", "add", counter, "--", "-50"); out != "-8\n" {
		t.Errorf("counter add negative: %q", out)
	}

	q := base + "/queue"
	mustZkc(t, "queue", "put", q, "--priority", "5", "later")
	mustZkc(t, "queue", "put", q, "first", "second")
	if out := mustZkc(t, "queue", "len", q); out != "3\n" {
		t.Errorf("queue len: %q", out)
	}
	if out := mustZkc(t, "queue", "take", q, "-n", "3"); out != "first\nsecond\nlater\n" {
		t.Errorf("queue take: %q", out)
	}
	if r := zkc(t, "queue", "take", q, "--no-wait"); r.code != exitFailure || !strings.Contains(r.stderr, "is empty") {
		t.Errorf("take from an empty queue: %s", r)
	}
	// -n takes what there is, then reports the queue empty, saying how
	// many it took.
	mustZkc(t, "queue", "put", q, "x", "y")
	if r := zkc(t, "queue", "take", q, "-n", "3", "--no-wait"); r.code != exitFailure || r.stdout != "x\ny\n" ||
		!strings.Contains(r.stderr, "is empty after taking 2 items (printed above)") {
		t.Errorf("take -n 3 from a queue of two: %s", r)
	}
	// A waiting taker gets the next item put.
	taker := start(t, nil, "queue", "take", q)
	mustZkc(t, "queue", "put", q, "late")
	if code := taker.exitCode(t, 30*time.Second); code != 0 || strings.Join(taker.stdout(), "\n") != "late" {
		t.Errorf("waiting taker: exit %d, output %q", code, taker.stdout())
	}

	b := base + "/barrier"
	if r := zkc(t, "barrier", "check", b); r.code != exitFailure {
		t.Errorf("check of an unset barrier: %s", r)
	}
	mustZkc(t, "barrier", "set", b)
	mustZkc(t, "barrier", "check", b)
	if r := zkc(t, "barrier", "wait", b, "--timeout", "300ms"); r.code != exitFailure || !strings.Contains(r.stderr, "still set") {
		t.Errorf("wait on a set barrier: %s", r)
	}
	waiter := start(t, nil, "barrier", "wait", b)
	mustZkc(t, "barrier", "remove", b) // the other spelling of "barrier rm"
	if code := waiter.exitCode(t, 30*time.Second); code != 0 {
		t.Errorf("waiter: exit %d\n%s", code, waiter.Stderr())
	}

	// A double barrier of two: each runs its command once both entered.
	file := filepath.Join(t.TempDir(), "entered")
	db := base + "/double"
	m1 := start(t, nil, "barrier", "enter", db, "--members", "2", "--", "sh", "-c", "echo one >> "+file)
	sess := session(t)
	testkit.Eventually(t, 30*time.Second, "the first member to enter", func() bool {
		kids, _, err := sess.Children(context.Background(), db)
		return err == nil && len(kids) == 1
	})
	if len(readLines(t, file)) != 0 {
		t.Fatalf("a member ran before the group was complete")
	}
	m2 := start(t, nil, "barrier", "enter", db, "--members", "2", "--", "sh", "-c", "echo two >> "+file)
	for _, m := range []*bg{m1, m2} {
		if code := m.exitCode(t, 30*time.Second); code != 0 {
			t.Errorf("double barrier member: exit %d\n%s", code, m.Stderr())
		}
	}
	if n := len(readLines(t, file)); n != 2 {
		t.Errorf("want both commands run, got %d", n)
	}

	if r := zkc(t, "status", "no-such-group"); r.code != exitFailure || !strings.Contains(r.stderr, "no group no-such-group") {
		t.Errorf("status of a missing group: %s", r)
	}
}

// --metrics serves Prometheus metrics: session state, locks held and
// leadership.
func TestMetrics(t *testing.T) {
	t.Parallel()
	path := unique(t)
	addr := freeAddr(t)
	holder := start(t, nil, "lock", path, "--metrics", addr)
	testkit.Eventually(t, 30*time.Second, "the lock", func() bool { return len(holder.stdout()) > 0 })
	body := httpGet(t, "http://"+addr+"/metrics")
	for _, want := range []string{
		fmt.Sprintf(`zkcoord_lock_held{path=%q} 1`, path),
		`zkcoord_session_state{state="connected"} 1`,
		`zkcoord_session_state{state="lost"} 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	holder.Proc.Terminate(10 * time.Second)

	group := strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", "-") + "-group"
	mustZkc(t, "resources", "add", group, "a", "b", "c")
	addr = freeAddr(t)
	w := start(t, nil, "rebalance", group, "--exec", "sleep 600", "--metrics", addr, "--name", "m1")
	testkit.Eventually(t, 30*time.Second, "the worker to run 3 resources and coordinate", func() bool {
		body := httpGet(t, "http://"+addr+"/metrics")
		return strings.Contains(body, fmt.Sprintf(`zkcoord_assigned_resources{group=%q} 3`, group)) &&
			strings.Contains(body, fmt.Sprintf(`zkcoord_leader{path=%q} 1`, rebalance.DefaultRoot+"/"+group))
	})
	// A resource added while it coordinates is one rebalancing, seen
	// whatever the group looked like when it took office.
	mustZkc(t, "resources", "add", group, "d")
	testkit.Eventually(t, 30*time.Second, "the worker to run 4 resources and count the rebalancing", func() bool {
		body := httpGet(t, "http://"+addr+"/metrics")
		return strings.Contains(body, fmt.Sprintf(`zkcoord_assigned_resources{group=%q} 4`, group)) &&
			strings.Contains(body, fmt.Sprintf(`zkcoord_rebalances_total{group=%q} 1`, group)) &&
			strings.Contains(body, fmt.Sprintf(`zkcoord_rebalance_duration_seconds_bucket{group=%q,le="+Inf"} 1`, group))
	})
	w.Proc.Terminate(10 * time.Second)
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TLS files and digest credentials from flags and the environment.
func TestTLSAndAuth(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithTLS())
	ca := filepath.Join(c.Dir(), "truststore.pem")
	if _, err := os.Stat(ca); err != nil {
		t.Fatalf("the CA certificate of the TLS cluster: %v", err)
	}
	env := testEnv(strings.Join(c.SecureServers(), ","))
	if r := zkcEnv(t, append(env, "ZKCOORD_TLS_CA="+ca), "counter", "set", "/tls", "7"); r.code != 0 || r.stdout != "7\n" {
		t.Fatalf("counter over TLS: %s", r)
	}
	if r := zkcEnv(t, env, "--connect-timeout", "3s", "counter", "get", "/tls"); r.code != exitFailure {
		t.Errorf("TLS server without TLS: %s", r)
	}

	// A node only its creator may use.
	plain := testEnv(c.ConnectString())
	if r := zkcEnv(t, plain, "counter", "set", "/private", "5", "--auth", "alice:secret", "--acl", "creator"); r.code != 0 {
		t.Fatalf("counter set with auth: %s", r)
	}
	if r := zkcEnv(t, append(plain, "ZKCOORD_AUTH=alice:secret"), "counter", "get", "/private"); r.code != 0 || r.stdout != "5\n" {
		t.Errorf("counter get with the creator's credentials: %s", r)
	}
	if r := zkcEnv(t, plain, "counter", "get", "/private"); r.code != exitFailure || !strings.Contains(r.stderr, "not authenticated") && !strings.Contains(r.stderr, "auth") {
		t.Errorf("counter get without credentials: %s", r)
	}
}

// --chroot and ZKCOORD_CHROOT put every node under the chroot path, and
// the commands see only what is under it.
func TestChroot(t *testing.T) {
	t.Parallel()
	chroot := unique(t)
	group := "g"
	sess := session(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A chroot that does not exist is an error that names it, for writes
	// and reads alike, given as --chroot or in --zk; nothing is created.
	for _, args := range [][]string{
		{"--chroot", chroot, "resources", "add", group, "r1"},
		{"--chroot", chroot, "counter", "set", "/c", "5"},
		{"--chroot", chroot, "ls", "/"},
		{"--chroot", chroot, "create", "/x"},
		{"--zk", cluster.ConnectString() + chroot, "get", "/c"},
	} {
		wantFail(t, zkc(t, args...), exitFailure, "the chroot "+chroot+" does not exist")
	}
	if ok, _, err := sess.Exists(ctx, chroot); err != nil || ok {
		t.Fatalf("the missing chroot was created: %v %v", ok, err)
	}
	// create --parents creates it, with the node.
	mustZkc(t, "--chroot", chroot, "create", "--parents", "/made")
	mustZkc(t, "--chroot", chroot, "resources", "add", group, "r1", "r2")
	got, err := rebalance.ListResources(ctx, sess, zkcoord.Join(chroot+rebalance.DefaultRoot, group))
	if err != nil || !slices.Equal(got, []string{"r1", "r2"}) {
		t.Fatalf("resources under the chroot: %v, %v", got, err)
	}
	// The environment variable works the same; without a chroot the group
	// is not found.
	env := append(testEnv(cluster.ConnectString()), "ZKCOORD_CHROOT="+chroot)
	if r := zkcEnv(t, env, "resources", "add", group, "r3"); r.code != 0 {
		t.Fatalf("resources add with ZKCOORD_CHROOT: %s", r)
	}
	if r := zkcEnv(t, env, "resources", "ls", group); r.code != 0 || r.stdout != "r1\nr2\nr3\n" {
		t.Errorf("resources ls with ZKCOORD_CHROOT: %s", r)
	}
	mustZkc(t, "create", chroot+"/elsewhere")
	if r := zkc(t, "--chroot", chroot+"/elsewhere", "resources", "ls", group); strings.Contains(r.stdout, "r1") {
		t.Errorf("another chroot sees the group: %s", r)
	}
	mustZkc(t, "counter", "set", "/c", "5", "--chroot", chroot)
	if _, _, err := sess.Get(ctx, chroot+"/c"); err != nil {
		t.Errorf("counter under the chroot: %v", err)
	}
	if r := zkc(t, "--chroot", "relative", "resources", "ls", group); r.code != exitUsage || !strings.Contains(r.stderr, "--chroot") {
		t.Errorf("a relative chroot: %s", r)
	}
}

// --log-format json (or ZKCOORD_LOG_FORMAT=json) writes one JSON object per
// line on standard error.
func TestLogFormatJSON(t *testing.T) {
	t.Parallel()
	path := unique(t)
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{args: []string{"--log-format", "json"}},
		{env: []string{"ZKCOORD_LOG_FORMAT=json"}},
	} {
		env := append(testEnv(cluster.ConnectString()), c.env...)
		args := append([]string{"lock", path, "--log-level", "debug"}, c.args...)
		r := zkcEnv(t, env, append(args, "--", "true")...)
		if r.code != 0 {
			t.Fatalf("zkcoord %v: %s", args, r)
		}
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		acquired := false
		for _, l := range lines {
			var rec struct {
				Time  time.Time
				Level string
				Msg   string
				Path  string
			}
			if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Time.IsZero() || rec.Level == "" || rec.Msg == "" {
				t.Fatalf("%v %v: stderr line %q is not a JSON log record (%v)", c.env, c.args, l, err)
			}
			acquired = acquired || rec.Msg == "lock acquired" && rec.Path == path
		}
		if !acquired {
			t.Errorf("%v %v: no \"lock acquired\" record:\n%s", c.env, c.args, r.stderr)
		}
	}
	// The text format is not JSON.
	r := zkc(t, "lock", path, "--log-level", "info", "--", "true")
	if r.code != 0 || !strings.Contains(r.stderr, `msg="lock acquired"`) {
		t.Errorf("text logs: %s", r)
	}
}

// A group with resources and no members is idle, not rebalancing.
func TestStatusWithoutMembers(t *testing.T) {
	t.Parallel()
	group := fmt.Sprintf("idle-%d", time.Now().UnixNano())
	mustZkc(t, "resources", "add", group, "a", "b")
	out := mustZkc(t, "status", group)
	if strings.Contains(out, "rebalancing") || !strings.Contains(out, "no members") {
		t.Fatalf("status of a group without members:\n%s", out)
	}
}

// rm is the one spelling of removal in the help; remove is accepted too.
func TestRemoveSpelling(t *testing.T) {
	t.Parallel()
	group := fmt.Sprintf("spell-%d", time.Now().UnixNano())
	mustZkc(t, "resources", "add", group, "a", "b")
	mustZkc(t, "resources", "rm", group, "a")
	mustZkc(t, "resources", "remove", group, "b")
	if out := mustZkc(t, "resources", "ls", group); strings.TrimSpace(out) != "" {
		t.Fatalf("resources left: %q", out)
	}
	b := unique(t)
	mustZkc(t, "barrier", "set", b)
	mustZkc(t, "barrier", "rm", b)
	if r := zkc(t, "barrier", "check", b); r.code == 0 {
		t.Fatalf("the barrier is still set after barrier rm: %s", r)
	}
	mustZkc(t, "create", b+"-node")
	mustZkc(t, "remove", b+"-node")
	if r := zkc(t, "stat", b+"-node"); r.code == 0 {
		t.Fatalf("the node is still there after remove: %s", r)
	}
	help := mustZkc(t, "barrier", "--help")
	if strings.Contains(help, "\n  remove") || !strings.Contains(help, "rm ") {
		t.Fatalf("barrier help should list rm, not remove:\n%s", help)
	}
}
