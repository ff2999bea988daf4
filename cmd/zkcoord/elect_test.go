//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// leaderScript records "leader <id> <token> <pid>" and runs until killed.
func leaderScript(file string) string {
	return fmt.Sprintf(`echo "leader $ZKCOORD_ID $ZKCOORD_TOKEN $$" >> %s; exec sleep 600`, file)
}

// parseLeaderLine splits a line written by leaderScript.
func parseLeaderLine(t *testing.T, line string) (id string, token int64, pid int) {
	t.Helper()
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "leader" {
		t.Fatalf("unexpected line %q", line)
	}
	token, _ = strconv.ParseInt(f[2], 10, 64)
	pid, _ = strconv.Atoi(f[3])
	return f[1], token, pid
}

// elect fails over when the leader is killed: the standby runs its command
// only after the leader's session expired, with a larger token, and the
// killed leader's command died with it.
func TestElectFailover(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "log")
	path := unique(t)
	a := start(t, nil, "elect", path, "--id", "a", "--", "sh", "-c", leaderScript(file))
	testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(readLines(t, file)) == 1 })
	b := start(t, nil, "elect", path, "--id", "b", "--", "sh", "-c", leaderScript(file))

	var info leaderInfo
	testkit.Eventually(t, 30*time.Second, "leader to show a and b standing by", func() bool {
		r := zkc(t, "leader", path, "--json")
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &info) == nil && info.Leader != nil &&
			info.Leader.ID == "a" && info.Leader.Acting
	})
	if out := mustZkc(t, "leader", path); !strings.Contains(out, "leader   a") {
		t.Errorf("leader: %s", out)
	}
	_, tokA, pidA := parseLeaderLine(t, readLines(t, file)[0])
	if tokA != info.Leader.Token {
		t.Errorf("the command's token %d differs from the leader's %d", tokA, info.Leader.Token)
	}

	killed := time.Now()
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	if alive(pidA) {
		testkit.Eventually(t, 5*time.Second, "a's command to die with it", func() bool { return !alive(pidA) })
	}
	testkit.Eventually(t, 30*time.Second, "b to lead", func() bool { return len(readLines(t, file)) == 2 })
	took := time.Since(killed)
	idB, tokB, pidB := parseLeaderLine(t, readLines(t, file)[1])
	if idB != "b" || tokB <= tokA {
		t.Fatalf("want b with a token above %d, got %s %d", tokA, idB, tokB)
	}
	// b may lead only once a's session has expired (4s).
	if took < 3*time.Second {
		t.Errorf("b took over %v after a was killed: before a's session could expire", took)
	}
	// Interrupted, b stops its command and leaves the election.
	if err := b.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	b.exitCode(t, time.Second)
	if alive(pidB) {
		t.Errorf("b's command still runs")
	}
	if r := zkc(t, "leader", path); r.code != exitFailure || !strings.Contains(r.stderr, "has no leader") {
		t.Errorf("leader of an empty election: %s", r)
	}
}

// With --no-recover, a leader cut off from ZooKeeper until its session is lost
// stops its command and exits with status 3 (without, it stands by again:
// TestRideOutIncident).
func TestElectLost(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "log")
	path := unique(t)
	if r := zkc(t, "elect", path, "--no-recover", "--rejoin", "--", "true"); r.code != exitUsage {
		t.Errorf("--no-recover with --rejoin: %s", r)
	}
	p := newProxyT(t)
	a := start(t, testEnv(strings.Join(p.Servers(), ",")), "elect", path, "--id", "a", "--no-recover", "--", "sh", "-c", leaderScript(file))
	testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(readLines(t, file)) == 1 })
	_, _, pid := parseLeaderLine(t, readLines(t, file)[0])
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if code := a.exitCode(t, 30*time.Second); code != exitLost {
		t.Fatalf("want exit status 3, got %d\n%s", code, a.Stderr())
	}
	if alive(pid) {
		t.Errorf("the command still runs after leadership was lost")
	}
}

// With --fence, a new active runs the fencing command against a previous
// active that did not stop cleanly, and only then its own command; after a
// clean stop there is nothing to fence.
func TestElectFence(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "log")
	path := unique(t)
	fence := fmt.Sprintf(`echo "fence $ZKCOORD_PREV_ID $ZKCOORD_PREV_TOKEN $ZKCOORD_PREV_PID" >> %s`, file)
	elect := func(id string) *bg {
		return start(t, nil, "elect", path, "--id", id, "--fence", fence, "--", "sh", "-c", leaderScript(file))
	}
	a := elect("a")
	testkit.Eventually(t, 30*time.Second, "a to be active", func() bool { return len(readLines(t, file)) == 1 })
	b := elect("b")
	testkit.Eventually(t, 30*time.Second, "b to stand by", func() bool {
		r := zkc(t, "leader", path, "--json")
		var info leaderInfo
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &info) == nil && info.Breadcrumb != nil &&
			info.Breadcrumb.ID == "a"
	})
	_, tokA, _ := parseLeaderLine(t, readLines(t, file)[0])
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "b to fence a and take over", func() bool { return len(readLines(t, file)) == 3 })
	lines := readLines(t, file)
	f := strings.Fields(lines[1])
	if len(f) != 4 || f[0] != "fence" || f[1] != "a" || f[2] != strconv.FormatInt(tokA, 10) || f[3] != strconv.Itoa(a.Pid()) {
		t.Fatalf("want b to fence a (token %d, pid %d) before leading; got:\n%s", tokA, a.Pid(), strings.Join(lines, "\n"))
	}
	if id, tok, _ := parseLeaderLine(t, lines[2]); id != "b" || tok <= tokA {
		t.Fatalf("want b leading with a larger token; got:\n%s", strings.Join(lines, "\n"))
	}
	// b stops cleanly: the next active has nothing to fence.
	if err := b.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	b.exitCode(t, time.Second)
	c := elect("c")
	testkit.Eventually(t, 30*time.Second, "c to be active", func() bool { return len(readLines(t, file)) == 4 })
	if id, _, _ := parseLeaderLine(t, readLines(t, file)[3]); id != "c" {
		t.Fatalf("want c active without fencing; got:\n%s", strings.Join(readLines(t, file), "\n"))
	}
	c.Proc.Terminate(10 * time.Second)
}

// A leader that lost its session stops its command, stands by again with
// a new session once the network is back, and leads again with a larger
// token.
func TestElectRejoin(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "log")
	path := unique(t)
	p := newProxyT(t)
	a := start(t, testEnv(strings.Join(p.Servers(), ",")), "elect", path, "--id", "a", "--",
		"sh", "-c", leaderScript(file))
	testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(readLines(t, file)) == 1 })
	_, tok1, pid1 := parseLeaderLine(t, readLines(t, file)[0])
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the command to be stopped", func() bool { return !alive(pid1) })
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 45*time.Second, "a to lead again", func() bool { return len(readLines(t, file)) == 2 })
	id, tok2, _ := parseLeaderLine(t, readLines(t, file)[1])
	if id != "a" || tok2 <= tok1 {
		t.Fatalf("want a leading again with a token above %d, got %s %d", tok1, id, tok2)
	}
	if a.Exited() {
		t.Fatalf("a exited: %v\n%s", a.ExitErr(), a.Stderr())
	}
	a.Proc.Terminate(10 * time.Second)
}

// A leader deposed while its session lives (its node deleted) stops its
// command and exits with status 3; with --rejoin it stands by again and
// leads again with a larger token.
func TestElectRejoinDeposed(t *testing.T) {
	t.Parallel()
	sess := session(t)
	for _, rejoin := range []bool{false, true} {
		file := filepath.Join(t.TempDir(), "log")
		path := unique(t)
		args := []string{"elect", path, "--id", "a"}
		if rejoin {
			args = append(args, "--rejoin")
		}
		a := start(t, nil, append(args, "--", "sh", "-c", leaderScript(file))...)
		testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(readLines(t, file)) == 1 })
		_, tok1, pid1 := parseLeaderLine(t, readLines(t, file)[0])
		kids, _, err := sess.Children(t.Context(), path)
		if err != nil || len(kids) != 1 {
			t.Fatalf("the candidates: %v, %v", kids, err)
		}
		if err := sess.Delete(t.Context(), path+"/"+kids[0], -1); err != nil {
			t.Fatal(err)
		}
		if !rejoin {
			if code := a.exitCode(t, 30*time.Second); code != exitLost {
				t.Fatalf("deposed: want exit status 3, got %d\n%s", code, a.Stderr())
			}
			if alive(pid1) {
				t.Errorf("the command still runs after leadership was lost")
			}
			continue
		}
		testkit.Eventually(t, 30*time.Second, "a to lead again", func() bool { return len(readLines(t, file)) == 2 })
		if alive(pid1) {
			t.Errorf("the first command still runs")
		}
		if id, tok2, _ := parseLeaderLine(t, readLines(t, file)[1]); id != "a" || tok2 <= tok1 {
			t.Fatalf("want a leading again with a token above %d, got %s %d", tok1, id, tok2)
		}
		a.Proc.Terminate(10 * time.Second)
	}
}

// A leader interrupted while cut off from ZooKeeper stops its command
// before its session can expire, whatever --grace says: the next leader's
// command finds the first one gone.
func TestElectStopEndsBeforeExpiry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := unique(t)
	pidFile, nextFile := filepath.Join(dir, "pid"), filepath.Join(dir, "next")
	proxy := newProxyT(t)
	script := fmt.Sprintf(`trap '' TERM; echo $$ > %s; while :; do sleep 0.05; done`, pidFile)
	a := start(t, testEnv(strings.Join(proxy.Servers(), ",")), "elect", path, "--id", "a", "--grace", "1m",
		"--", "sh", "-c", script)
	testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(readLines(t, pidFile)) > 0 })
	pid, err := strconv.Atoi(readLines(t, pidFile)[0])
	if err != nil {
		t.Fatal(err)
	}
	b := start(t, nil, "elect", path, "--id", "b", "--", "sh", "-c",
		fmt.Sprintf(`if kill -0 %d 2>/dev/null; then echo alive; else echo gone; fi > %s`, pid, nextFile))
	sess := session(t)
	testkit.Eventually(t, 30*time.Second, "b to stand by", func() bool {
		kids, _, err := sess.Children(t.Context(), path)
		return err == nil && len(kids) == 2
	})

	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := a.Proc.Terminate(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if code := b.exitCode(t, 45*time.Second); code != 0 {
		t.Fatalf("b failed: %d\n%s", code, b.Stderr())
	}
	if got := readLines(t, nextFile); len(got) != 1 || got[0] != "gone" {
		t.Fatalf("when b's command started, a's command was %q, want gone", got)
	}
}

// leader shows the value an acting leader advertises, and leader --watch
// prints a line when the leader proclaims another.
func TestLeaderShowsValue(t *testing.T) {
	t.Parallel()
	path := unique(t)
	e, err := election.New(session(t), path, election.WithID("svc-1"), election.WithValue("10.0.0.1:80"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := e.Campaign(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w := start(t, nil, "leader", path, "--watch")
	seen := func(want string) {
		t.Helper()
		testkit.Eventually(t, 30*time.Second, "leader --watch to print "+want, func() bool {
			return slices.ContainsFunc(w.stdout(), func(line string) bool { return strings.HasSuffix(line, want) })
		})
	}
	seen(`leader svc-1 term 1 token ` + strconv.FormatInt(l.Token(), 10) + ` acting yes value "10.0.0.1:80"`)
	if err := l.Proclaim(t.Context(), "10.0.0.2:80 (primary)"); err != nil {
		t.Fatal(err)
	}
	seen(`acting yes value "10.0.0.2:80 (primary)"`)
	if out := mustZkc(t, "leader", path); !strings.Contains(out, `value    "10.0.0.2:80 (primary)"`) {
		t.Errorf("leader: %s", out)
	}
	var info leaderInfo
	if r := zkc(t, "leader", path, "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &info) != nil ||
		info.Leader == nil || info.Leader.Value != "10.0.0.2:80 (primary)" {
		t.Errorf("leader --json: %s", r)
	}
}
