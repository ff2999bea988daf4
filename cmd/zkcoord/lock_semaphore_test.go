//go:build unix

package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// holding starts lock with args in the background and waits until it
// holds the lock.
func holding(t *testing.T, path string, args ...string) *bg {
	t.Helper()
	holder := start(t, nil, append([]string{"lock", path}, args...)...)
	testkit.Eventually(t, 30*time.Second, "the lock to be held", func() bool {
		out := holder.stdout()
		return len(out) > 0 && strings.HasPrefix(out[0], "locked "+path+" token ")
	})
	return holder
}

// With --limit-from, the semaphore's limit is a Curator SharedCount's:
// raising the count lets one more holder in; data that is no count is
// refused; and the flags that make no sense together are usage errors.
func TestLockLimitFrom(t *testing.T) {
	t.Parallel()
	path := unique(t)
	count := path + "-limit"
	mustZkc(t, "counter", "set", count, "1")
	sem := []string{"--limit", "5", "--limit-from", count}
	holding(t, path, sem...)
	tryArgs := append(append([]string{"lock", path, "--try"}, sem...), "--", "true")
	wantFail(t, zkc(t, tryArgs...), exitFailure, "held by another client")
	mustZkc(t, "counter", "set", count, "2")
	mustZkc(t, tryArgs...)

	mustZkc(t, "set", count, "two")
	wantFail(t, zkc(t, tryArgs...), exitFailure, count)

	for _, args := range [][]string{
		{"lock", path, "--limit-from", count, "--", "true"},
		{"lock", path, "--kazoo", "--", "true"},
		{"lock", path, "--limit", "2", "--kazoo", "--limit-from", count, "--", "true"},
		{"lock", path, "--limit", "2", "--limit-from", "no-slash", "--", "true"},
	} {
		if r := zkc(t, args...); r.code != exitUsage {
			t.Errorf("zkcoord %s: want a usage error, got %s", strings.Join(args, " "), r)
		}
	}
}

var kazooLease = regexp.MustCompile(`^[0-9a-f]{32}$`)

// With --kazoo, a lease is taken in Kazoo's layout and shared with
// Kazoo's own Semaphore: each sees the other's lease; a different limit
// is refused.
func TestLockKazooSemaphore(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t, 60*time.Second)
	path := unique(t)
	holder := holding(t, path, "--limit", "1", "--kazoo")
	sess := session(t)
	if data, _, err := sess.Get(ctx, path); err != nil || string(data) != "1" {
		t.Errorf("the semaphore node holds %q (%v); want Kazoo's limit 1", data, err)
	}
	if kids, _, err := sess.Children(ctx, path); err != nil || len(kids) != 1 || !kazooLease.MatchString(kids[0]) {
		t.Errorf("the semaphore's children are %q (%v); want one Kazoo lease", kids, err)
	}
	py := interop.StartPython(t, "testdata/kazoo_semaphore.py", cluster.ConnectString(), path, "1")
	expect := func(want string) {
		t.Helper()
		if _, err := py.Expect(ctx, want); err != nil {
			t.Fatalf("kazoo: waiting for %q: %v\n%s", want, err, py.Stderr())
		}
	}
	send := func(cmd string) {
		t.Helper()
		if err := py.Send(cmd); err != nil {
			t.Fatal(err)
		}
	}
	expect("ready")
	send("try")
	expect("tried False")
	wantFail(t, zkc(t, "lock", path, "--limit", "2", "--kazoo", "--try", "--", "true"), exitFailure, "another limit")

	if err := holder.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if code := holder.exitCode(t, time.Second); code != 0 {
		t.Fatalf("interrupted holder: exit %d\n%s", code, holder.Stderr())
	}
	send("try")
	expect("tried True")
	wantFail(t, zkc(t, "lock", path, "--limit", "1", "--kazoo", "--try", "--", "true"), exitFailure, "held by another client")
	send("release")
	expect("released")
	mustZkc(t, "lock", path, "--limit", "1", "--kazoo", "--try", "--", "true")
	if kids, _, err := sess.Children(ctx, path); err != nil || len(kids) != 0 {
		t.Errorf("after every lease was released the semaphore has children %q (%v)", kids, err)
	}
}
