//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zkcoord/zkcoord/zktest"
)

// ensembleOf reads ensemble show --json with env.
func ensembleOf(t *testing.T, env []string, args ...string) ensembleJSON {
	t.Helper()
	r := zkcEnv(t, env, append([]string{"ensemble"}, args...)...)
	if r.code != 0 {
		t.Fatalf("zkcoord ensemble %s: %s", strings.Join(args, " "), r)
	}
	var e ensembleJSON
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil {
		t.Fatalf("ensemble %s --json: %v\n%s", strings.Join(args, " "), err, r.stdout)
	}
	return e
}

func memberIDs(e ensembleJSON) []int64 {
	var ids []int64
	for _, m := range e.Members {
		ids = append(ids, m.ID)
	}
	return ids
}

// ensemble shows the membership of /zookeeper/config and changes it with
// reconfig: a member removed, added back and dropped again by a new
// membership, each only as the super user and only from the version
// given, also when the server that takes the change leaves with it; what
// the ensemble refuses is said in words an operator can act on, and
// nothing changes.
func TestEnsemble(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithServers(3), zktest.WithReconfig())
	env := testEnv(c.ConnectString())
	super := append(slices.Clip(env), "ZKCOORD_AUTH="+zktest.SuperAuth)

	e := ensembleOf(t, env, "show", "--json")
	if !slices.Equal(memberIDs(e), []int64{1, 2, 3}) || e.Version == "" || e.Version == "0" {
		t.Fatalf("ensemble show --json: %+v; want members 1, 2, 3 and a version", e)
	}
	var clients []string
	for i, m := range e.Members {
		clients = append(clients, m.Client)
		if m.Role != "participant" || m.Line != c.Server(i).Line() {
			t.Errorf("member %+v; want a participant with the line %s", m, c.Server(i).Line())
		}
	}
	if !slices.Equal(clients, c.Servers()) {
		t.Errorf("client addresses %v; want %v", clients, c.Servers())
	}
	r := zkcEnv(t, env, "ensemble", "show")
	if r.code != 0 || !strings.Contains(r.stdout, "ID  ROLE") || !strings.Contains(r.stdout, c.Servers()[2]) ||
		!strings.HasSuffix(r.stdout, "version "+e.Version+"\n") {
		t.Errorf("ensemble show: %s", r)
	}

	// Not the super user: refused, and told what it takes.
	wantFail(t, zkcEnv(t, env, "ensemble", "remove", "3"), exitFailure, "super user")
	// A stale version: refused, with the current one.
	v, _ := strconv.ParseInt(e.Version, 16, 64)
	stale := strconv.FormatInt(v-1, 16)
	wantFail(t, zkcEnv(t, super, "ensemble", "remove", "3", "--from-version", stale), exitFailure,
		fmt.Sprintf("at version %s, not %s", e.Version, stale))
	if got := ensembleOf(t, env, "show", "--json"); got.Version != e.Version || len(got.Members) != 3 {
		t.Fatalf("a refused change changed the membership: %+v", got)
	}

	// Sent through the server that leaves, which may drop its clients
	// before it answers.
	removed := ensembleOf(t, append(slices.Clip(super), "ZKCOORD_SERVERS="+c.Servers()[2]),
		"remove", "3", "--from-version", e.Version, "--json")
	if !slices.Equal(memberIDs(removed), []int64{1, 2}) || removed.Version == e.Version {
		t.Fatalf("ensemble remove 3: %+v", removed)
	}
	added := ensembleOf(t, super, "add", c.Server(2).Line(), "--json")
	if !slices.Equal(memberIDs(added), []int64{1, 2, 3}) {
		t.Fatalf("ensemble add server 3: %+v", added)
	}
	set := ensembleOf(t, super, "set", c.Server(0).Line(), c.Server(1).Line(), "--from-version", added.Version, "--json")
	if !slices.Equal(memberIDs(set), []int64{1, 2}) {
		t.Fatalf("ensemble set servers 1 and 2: %+v", set)
	}
	if got := ensembleOf(t, env, "show", "--json"); got.Version != set.Version || !slices.Equal(memberIDs(got), []int64{1, 2}) {
		t.Errorf("ensemble show after set: %+v; want %+v", got, set)
	}

	// Removing every member is refused by the ensemble.
	wantFail(t, zkcEnv(t, super, "ensemble", "remove", "1", "2"), exitFailure, "refused")

	for _, args := range [][]string{
		{"ensemble"},
		{"ensemble", "add"},
		{"ensemble", "add", "zk4:2888:3888"},
		{"ensemble", "remove", "three"},
		{"ensemble", "remove", "3", "--from-version", "v1"},
		{"ensemble", "show", "--from-version", "1"},
	} {
		if r := zkcEnv(t, super, args...); r.code != exitUsage {
			t.Errorf("zkcoord %s: want a usage error, got %s", strings.Join(args, " "), r)
		}
	}
}

// A server without reconfigEnabled refuses a change, and zkcoord says why.
func TestEnsembleReconfigDisabled(t *testing.T) {
	t.Parallel()
	wantFail(t, zkc(t, "ensemble", "remove", "1", "--auth", zktest.SuperAuth), exitFailure, "reconfigEnabled")
}
