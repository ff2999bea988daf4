//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// locks ls lists the holder and the waiters of a lock; lock break refuses
// without --yes, and with it deletes the holder's node so the waiter gets
// the lock; lock revoke asks the holder, and fails when the holder, which
// did not opt in, does not let go within --wait.
func TestLocksListBreakRevoke(t *testing.T) {
	t.Parallel()
	path := unique(t)
	holder := start(t, nil, "lock", path, "--data", "first")
	testkit.Eventually(t, 30*time.Second, "the lock to be held", func() bool { return len(holder.stdout()) > 0 })
	waiter := start(t, nil, "lock", path, "--data", "second")
	var cs []contenderJSON
	testkit.Eventually(t, 30*time.Second, "locks ls to show a holder and a waiter", func() bool {
		r := zkc(t, "locks", "ls", path, "--json")
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &cs) == nil && len(cs) == 2
	})
	if !cs[0].Holds || cs[0].Data != "first" || cs[1].Holds || cs[1].Data != "second" || cs[0].Token >= cs[1].Token {
		t.Fatalf("locks ls: %+v", cs)
	}
	if out := mustZkc(t, "locks", "ls", "--kind", "mutex", path); !strings.Contains(out, "holds") || !strings.Contains(out, "first") {
		t.Errorf("locks ls: %s", out)
	}
	if r := zkc(t, "lock", "break", path); r.code != exitUsage || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("lock break without --yes: %s", r)
	}
	if r := zkc(t, "locks", "ls", path, "--kind", "table"); r.code != exitUsage {
		t.Errorf("a bad --kind: %s", r)
	}
	r := zkc(t, "lock", "revoke", path, "--wait", "1s")
	if r.code != exitFailure || !strings.Contains(r.stderr, "still holds") || !strings.Contains(r.stderr, "--revocable") ||
		!strings.Contains(r.stderr, cs[0].Node) {
		t.Errorf("lock revoke of a holder that ignores it: %s", r)
	}
	out := mustZkc(t, "lock", "revoke", path, "--wait", "0")
	if !strings.Contains(out, "asked to release "+path+" node "+cs[0].Node) {
		t.Errorf("lock revoke --wait 0: %q", out)
	}
	out = mustZkc(t, "lock", "break", path, "--yes")
	if !strings.Contains(out, "broke "+path+" node "+cs[0].Node) || !strings.Contains(out, cs[0].Session) {
		t.Errorf("lock break: %q", out)
	}
	if code := holder.exitCode(t, 30*time.Second); code != exitLost {
		t.Errorf("the broken holder exited %d, want 3", code)
	}
	testkit.Eventually(t, 30*time.Second, "the waiter to get the lock", func() bool { return len(waiter.stdout()) > 0 })
	if r := zkc(t, "lock", "break", "/nonexistent-lock-"+strings.TrimPrefix(path, "/t/"), "--yes"); r.code != exitFailure {
		t.Errorf("breaking a free lock: %s", r)
	}
	// Read locks and semaphores.
	rw := start(t, nil, "lock", path+"-rw", "--read")
	testkit.Eventually(t, 30*time.Second, "the read lock", func() bool { return len(rw.stdout()) > 0 })
	if out := mustZkc(t, "locks", "ls", path+"-rw", "--kind", "rwlock"); !strings.Contains(out, "holds (read)") {
		t.Errorf("locks ls --kind rwlock: %s", out)
	}
	sem := start(t, nil, "lock", path+"-sem", "--limit", "2")
	testkit.Eventually(t, 30*time.Second, "the lease", func() bool { return len(sem.stdout()) > 0 })
	if out := mustZkc(t, "locks", "ls", path+"-sem", "--kind", "semaphore"); !strings.Contains(out, "holds") {
		t.Errorf("locks ls --kind semaphore: %s", out)
	}
	// lock break and lock revoke say what they support, and how to see
	// the holders of the other kinds.
	for _, c := range []struct{ path, kind, name string }{{path + "-rw", "rwlock", "read/write lock"}, {path + "-sem", "semaphore", "semaphore"}} {
		for _, cmd := range [][]string{{"lock", "break", c.path, "--yes"}, {"lock", "revoke", c.path}} {
			wantFail(t, zkc(t, cmd...), exitFailure, fmt.Sprintf("%s supports mutexes only (lock PATH), and %s is a %s: 'zkcoord locks ls %s --kind %s'",
				strings.Join(cmd[:2], " "), c.path, c.name, c.path, c.kind))
		}
	}
}

// election ls lists the participants, the leader first.
func TestElectionList(t *testing.T) {
	t.Parallel()
	path := unique(t)
	a := start(t, nil, "elect", path, "--id", "a")
	testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(a.stdout()) > 0 })
	start(t, nil, "elect", path, "--id", "b")
	var ps []participantJSON
	testkit.Eventually(t, 30*time.Second, "two participants", func() bool {
		r := zkc(t, "election", "ls", path, "--json")
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &ps) == nil && len(ps) == 2
	})
	if ps[0].ID != "a" || !ps[0].Leader || ps[1].ID != "b" || ps[1].Leader {
		t.Fatalf("election ls: %+v", ps)
	}
	if out := mustZkc(t, "election", "ls", path); !strings.Contains(out, "leader") || !strings.Contains(out, " b ") {
		t.Errorf("election ls: %s", out)
	}
}

// election revoke asks the acting leader to step down: a zkcoord leader
// sees the request on Leadership.Revoked; without a leader it fails, and
// it fails when the leader, which does not resign, is still leading after
// --wait.
func TestElectionRevoke(t *testing.T) {
	t.Parallel()
	path := unique(t)
	if r := zkc(t, "election", "revoke", path); r.code != exitFailure || !strings.Contains(r.stderr, "no leader") {
		t.Fatalf("election revoke without a leader: exit %d, %s", r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := election.New(session(t), path, election.WithID("leader-1"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Resign(ctx)
	var asked struct {
		ID   string `json:"id"`
		Term int64  `json:"term"`
	}
	out := mustZkc(t, "election", "revoke", path, "--json", "--wait", "0")
	if err := json.Unmarshal([]byte(out), &asked); err != nil || asked.ID != "leader-1" || asked.Term != l.Term() {
		t.Fatalf("election revoke --json: %s (%v), want leader-1 in term %d", out, err, l.Term())
	}
	select {
	case <-l.Revoked():
	case <-ctx.Done():
		t.Fatal("the leader did not see the request")
	}
	if out := mustZkc(t, "election", "revoke", path, "--wait", "0"); !strings.Contains(out, "asked to step down") || !strings.Contains(out, "leader-1") {
		t.Errorf("election revoke: %s", out)
	}
	r := zkc(t, "election", "revoke", path, "--wait", "1s")
	if r.code != exitFailure || !strings.Contains(r.stderr, "still leads") || !strings.Contains(r.stderr, "leader-1") {
		t.Errorf("election revoke of a leader that does not step down: %s", r)
	}
}

// With --revocable, a lock holder asked to release stops its command and
// releases, and a leader asked to step down resigns: the next in line
// takes over. The revoke commands return once that is done.
func TestRevocableHolders(t *testing.T) {
	t.Parallel()
	path := unique(t)
	contenders := func(n int) func() bool {
		return func() bool {
			var cs []contenderJSON
			r := zkc(t, "locks", "ls", path, "--json")
			return r.code == 0 && json.Unmarshal([]byte(r.stdout), &cs) == nil && len(cs) == n && cs[0].Holds
		}
	}
	// The waiter starts once the holder holds, so that the revocable one
	// is the holder.
	holder := start(t, nil, "lock", path, "--revocable", "--", "sleep", "600")
	testkit.Eventually(t, 30*time.Second, "the holder to hold", contenders(1))
	waiter := start(t, nil, "lock", path, "--data", "second")
	testkit.Eventually(t, 30*time.Second, "a holder and a waiter", contenders(2))
	if out := mustZkc(t, "lock", "revoke", path); !strings.Contains(out, "released "+path) {
		t.Errorf("lock revoke: %q", out)
	}
	var cs []contenderJSON
	if r := zkc(t, "locks", "ls", path, "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &cs) != nil ||
		len(cs) != 1 || cs[0].Data != "second" {
		t.Errorf("lock revoke returned while the revoked holder was still there: %s", r)
	}
	if code := holder.exitCode(t, 30*time.Second); code == exitLost || code == 0 {
		t.Errorf("the revoked holder exited %d, want its command's status after SIGTERM", code)
	}
	testkit.Eventually(t, 30*time.Second, "the waiter to get the lock", func() bool { return len(waiter.stdout()) > 0 })

	epath := path + "-election"
	a := start(t, nil, "elect", epath, "--id", "a", "--revocable")
	testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(a.stdout()) > 0 })
	b := start(t, nil, "elect", epath, "--id", "b")
	testkit.Eventually(t, 30*time.Second, "b to stand by", func() bool {
		var ps []participantJSON
		r := zkc(t, "election", "ls", epath, "--json")
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &ps) == nil && len(ps) == 2
	})
	if out := mustZkc(t, "election", "revoke", epath); !strings.Contains(out, "stepped down") {
		t.Errorf("election revoke: %q", out)
	}
	var ps []participantJSON
	if r := zkc(t, "election", "ls", epath, "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &ps) != nil ||
		len(ps) != 1 || ps[0].ID != "b" {
		t.Errorf("election revoke returned while the revoked leader was still there: %s", r)
	}
	if code := a.exitCode(t, 30*time.Second); code != 0 {
		t.Errorf("the revoked leader exited %d, want 0", code)
	}
	testkit.Eventually(t, 30*time.Second, "b to lead", func() bool { return len(b.stdout()) > 0 })
}

// TestElectionCommandsFindFailoverGroup: 'election ls' and 'election revoke'
// take the PATH a group was run with 'elect --fence', whose election lives
// in PATH/lock, as 'leader' does.
func TestElectionCommandsFindFailoverGroup(t *testing.T) {
	t.Parallel()
	path := unique(t)
	participants := func() []participantJSON {
		var ps []participantJSON
		if r := zkc(t, "election", "ls", path, "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &ps) != nil {
			t.Fatalf("election ls: %s", r)
		}
		return ps
	}
	a := start(t, nil, "elect", path, "--fence", "true", "--id", "a", "--revocable")
	testkit.Eventually(t, 30*time.Second, "a to lead", func() bool { return len(a.stdout()) > 0 })
	start(t, nil, "elect", path, "--fence", "true", "--id", "b")
	testkit.Eventually(t, 30*time.Second, "a and b in the election", func() bool { return len(participants()) == 2 })
	if ps := participants(); ps[0].ID != "a" || !ps[0].Acting {
		t.Errorf("election ls: %+v, want a acting first", ps)
	}
	if out := mustZkc(t, "election", "revoke", path); !strings.Contains(out, "stepped down") || !strings.Contains(out, "leader a ") {
		t.Errorf("election revoke: %q", out)
	}
	if code := a.exitCode(t, 30*time.Second); code != 0 {
		t.Errorf("the revoked leader exited %d, want 0", code)
	}
}

// TestLocksLsHintsAtOtherKinds: 'locks ls' of a read/write lock without
// --kind lists no mutex contender and says on stderr where to look, so
// that an empty table does not read as a free lock.
func TestLocksLsHintsAtOtherKinds(t *testing.T) {
	t.Parallel()
	path := unique(t)
	start(t, nil, "lock", path, "--write", "--", "sleep", "600")
	testkit.Eventually(t, 30*time.Second, "the writer to hold", func() bool {
		var cs []contenderJSON
		r := zkc(t, "locks", "ls", path, "--kind", "rwlock", "--json")
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &cs) == nil && len(cs) == 1 && cs[0].Holds
	})
	r := zkc(t, "locks", "ls", path, "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" || !strings.Contains(r.stderr, "--kind rwlock") {
		t.Errorf("locks ls without --kind: %s", r)
	}
	if r := zkc(t, "locks", "ls", path, "--kind", "mutex", "--json"); r.code != 0 || r.stderr != "" {
		t.Errorf("locks ls --kind mutex: %s, want no hint when the kind is given", r)
	}
}
