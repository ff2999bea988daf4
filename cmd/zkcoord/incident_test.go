//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// The long-running commands ride out a ZooKeeper incident: with the server
// stopped for longer than their sessions can live, ui keeps serving and
// says it is disconnected, watch says so too, elect stops its command and
// register loses its instance; once the server is back, each carries on
// with a new session: ui shows the state again, watch prints what changed,
// elect leads again with a new token and runs its command again, and the
// instance is registered again.
func TestRideOutIncident(t *testing.T) {
	t.Parallel()
	zk := zktest.Start(t)
	env := testEnv(zk.ConnectString())
	file := filepath.Join(t.TempDir(), "leader")
	const root = "/ride"
	check := sessionOn(t, zk)
	ctx := testkit.Ctx(t, 3*time.Minute)
	if err := check.EnsurePath(ctx, root+"/config"); err != nil {
		t.Fatal(err)
	}
	if _, err := check.Create(ctx, root+"/config/a", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}

	el := start(t, env, "elect", root+"/election", "--id", "e", "--", "sh", "-c", leaderScript(file))
	// With --fence, a new activation does not fence its own process.
	fenced := filepath.Join(t.TempDir(), "fenced")
	elf := start(t, env, "elect", root+"/failover", "--id", "f", "--fence", "echo fence $ZKCOORD_PREV_ID >> "+fenced,
		"--", "sh", "-c", leaderScript(fenced))
	reg := start(t, env, "services", "register", root+"/services", "billing", "--address", "10.0.0.5",
		"--port", "8080", "--id", "one")
	w := start(t, env, "watch", root+"/config", "--tree", "--json")
	ui := start(t, env, "ui", "--listen", "127.0.0.1:0", "--root", root)
	url := consoleAt(t, ui)

	testkit.Eventually(t, 30*time.Second, "elect to lead", func() bool { return len(readLines(t, file)) == 1 })
	_, token1, pid1 := parseLeaderLine(t, readLines(t, file)[0])
	testkit.Eventually(t, 30*time.Second, "elect --fence to lead", func() bool { return len(readLines(t, fenced)) == 1 })
	_, ftoken1, fpid1 := parseLeaderLine(t, readLines(t, fenced)[0])
	testkit.Eventually(t, 30*time.Second, "the registration", func() bool { return len(registered(reg)) == 1 })
	instance := root + "/services/billing/one"
	_, st, err := check.Get(ctx, instance)
	if err != nil {
		t.Fatal(err)
	}
	czxid1, owner1 := st.Czxid, st.EphemeralOwner
	if !serverHolds(t, zk, owner1) {
		t.Fatalf("the server's dump does not name the session 0x%x of the instance", owner1)
	}
	testkit.Eventually(t, 30*time.Second, "watch's initial load", func() bool { return len(watchLines(t, w, "Initialized", "")) == 1 })
	testkit.Eventually(t, 30*time.Second, "the console to show the leader", func() bool {
		st, err := consoleState(url)
		return err == nil && st.leader(root+"/election") == token1
	})

	// The incident: the server stops until every session is lost.
	if err := zk.Server(0).Stop(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "the console to say it is disconnected", func() error {
		st, err := consoleState(url)
		switch {
		case err != nil:
			return err
		case st.Status.Connected || !strings.Contains(st.Status.Failure, "session ended"):
			return fmt.Errorf("status %+v", st.Status)
		case st.leader(root+"/election") != token1:
			return errors.New("the last known state is gone")
		}
		return nil
	})
	testkit.Eventually(t, 30*time.Second, "watch to say it is disconnected, then that the session ended", func() bool {
		return len(watchLines(t, w, "StateChanged", "Suspended")) == 1 &&
			len(watchLines(t, w, "StateChanged", "Lost"))+len(watchLines(t, w, "StateChanged", "Expired")) == 1
	})
	testkit.Eventually(t, 30*time.Second, "elect to stop its commands", func() bool { return !alive(pid1) && !alive(fpid1) })
	testkit.Eventually(t, 30*time.Second, "register to lose its instance", func() bool {
		return strings.Contains(reg.Stderr(), "registering again with a new session")
	})
	for _, p := range []*bg{el, elf, reg, w, ui} {
		if p.Exited() {
			t.Fatalf("%s exited during the incident: %v\n%s", p.Name(), p.ExitErr(), p.Stderr())
		}
	}

	if err := zk.Server(0).Start(); err != nil {
		t.Fatal(err)
	}
	check = sessionOn(t, zk)
	if _, err := check.Set(ctx, root+"/config/a", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := check.Create(ctx, root+"/config/b", nil, 0); err != nil {
		t.Fatal(err)
	}

	// elect leads again, as a new candidacy, once its old session expired.
	testkit.Eventually(t, 60*time.Second, "elect to lead again", func() bool { return len(readLines(t, file)) == 2 })
	id, token2, _ := parseLeaderLine(t, readLines(t, file)[1])
	if id != "e" || token2 <= token1 {
		t.Fatalf("want e leading again with a token above %d, got %s %d", token1, id, token2)
	}
	testkit.Eventually(t, 60*time.Second, "elect --fence to lead again", func() bool { return len(readLines(t, fenced)) == 2 })
	lines := readLines(t, fenced)
	if id, ftoken2, _ := parseLeaderLine(t, lines[1]); id != "f" || ftoken2 <= ftoken1 {
		t.Fatalf("want f leading again, with a token above %d, without fencing itself:\n%s", ftoken1, strings.Join(lines, "\n"))
	}
	// The instance is registered again, and stays after the server expired
	// the session it was registered with.
	testkit.Eventually(t, 60*time.Second, "the instance to be registered again", func() bool { return len(registered(reg)) == 2 })
	testkit.Eventually(t, 60*time.Second, "the server to expire the old session", func() bool {
		return !serverHolds(t, zk, owner1)
	})
	_, st, err = check.Get(ctx, instance)
	if err != nil || st.Czxid == czxid1 || st.EphemeralOwner == owner1 {
		t.Fatalf("the instance after the incident: %+v, %v", st, err)
	}
	// watch prints the changes once each, and nothing for what did not
	// change.
	testkit.Eventually(t, 30*time.Second, "watch to resync with a new session", func() bool {
		return len(watchLines(t, w, "StateChanged", "Connected")) == 1 && len(watchLines(t, w, "Resynced", "")) == 1 &&
			len(watchLines(t, w, "Updated", root+"/config/a")) == 1 && len(watchLines(t, w, "Added", root+"/config/b")) == 1
	})
	if n := len(watchLines(t, w, "Added", root+"/config/a")); n != 1 {
		t.Errorf("watch printed %d Added lines for an unchanged node, want 1:\n%s", n, strings.Join(w.stdout(), "\n"))
	}
	// The console shows the state again.
	testkit.WaitFor(t, 30*time.Second, "the console to show the new leader", func() error {
		st, err := consoleState(url)
		switch {
		case err != nil:
			return err
		case !st.Status.Connected || st.Status.Failure != "":
			return fmt.Errorf("status %+v", st.Status)
		case st.leader(root+"/election") != token2:
			return fmt.Errorf("leader token %d, want %d", st.leader(root+"/election"), token2)
		}
		return nil
	})

	for _, p := range []*bg{reg, w, ui} {
		if err := p.Proc.Terminate(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		if code := p.exitCode(t, 10*time.Second); code != 0 {
			t.Errorf("%s interrupted: exit %d\n%s", p.Name(), code, p.Stderr())
		}
	}
	for _, p := range []*bg{el, elf} {
		if err := p.Proc.Terminate(10 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

// With --no-recover, services register exits with status 3 when its session is
// lost, as it did before it registered again by default.
func TestServicesNoRecover(t *testing.T) {
	t.Parallel()
	p := newProxyT(t)
	reg := start(t, testEnv(strings.Join(p.Servers(), ",")), "services", "register", unique(t), "billing",
		"--address", "10.0.0.5", "--port", "8080", "--no-recover")
	testkit.Eventually(t, 30*time.Second, "the registration", func() bool { return len(registered(reg)) == 1 })
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if code := reg.exitCode(t, 30*time.Second); code != exitLost {
		t.Fatalf("want exit status 3, got %d\n%s", code, reg.Stderr())
	}
}

// sessionOn opens a Session on zk for checks made by the test.
func sessionOn(t *testing.T, zk *zktest.Cluster) *zkcoord.Session {
	t.Helper()
	return testkit.Connect(t, zk.Servers(), func(cfg *zkcoord.Config) { cfg.Chroot = "" })
}

// serverHolds reports whether zk's server still has the session id (its
// dump lists every live session).
func serverHolds(t *testing.T, zk *zktest.Cluster, id int64) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dump, err := zk.Server(0).FourLetter(ctx, "dump")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(dump, fmt.Sprintf("0x%x", id))
}

// registered returns the lines services register printed on registering.
func registered(p *bg) []string {
	var out []string
	for _, l := range p.stdout() {
		if strings.HasPrefix(l, "registered ") {
			out = append(out, l)
		}
	}
	return out
}

// watchLines returns the --json events of watch of a type and, for a state
// change, of a state, or else about a path ("" for any).
func watchLines(t *testing.T, p *bg, typ, about string) []watchEvent {
	t.Helper()
	var out []watchEvent
	for _, l := range p.stdout() {
		var ev watchEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if ev.Type == typ && (about == "" || ev.Path == about || ev.State == about) {
			out = append(out, ev)
		}
	}
	return out
}

// uiState is what the console's /api/state answers.
type uiState struct {
	Status console.Status           `json:"status"`
	Views  map[string]*console.View `json:"views"`
}

// leader returns the token of the leader the console shows for the
// election at path, 0 for none.
func (s uiState) leader(path string) int64 {
	if v := s.Views[path]; v != nil && v.Election != nil && v.Election.Leader != nil {
		return v.Election.Leader.Token
	}
	return 0
}

func consoleState(url string) (uiState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"api/state", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return uiState{}, err
	}
	defer resp.Body.Close()
	var st uiState
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /api/state: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}
