//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// zkcInput runs the binary as zkc does, with input on its standard input.
func zkcInput(t *testing.T, input []byte, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = testEnv(cluster.ConnectString())
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running zkcoord %v: %v", args, err)
	}
	return r
}

// wantFail checks that r exited with code and said want on stderr.
func wantFail(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stderr, want) {
		t.Errorf("want exit %d and %q on stderr, got %s", code, want, r)
	}
}

// ls, get, stat and set, in text and in JSON, and what a missing node
// gives each of them.
func TestTreeReadWrite(t *testing.T) {
	t.Parallel()
	root := unique(t)
	sess := session(t)
	ctx := t.Context()
	if out := mustZkc(t, "create", root+"/app", "hello", "--parents"); out != root+"/app\n" {
		t.Fatalf("create --parents printed %q", out)
	}
	mustZkc(t, "create", root+"/app/b")
	mustZkc(t, "create", root+"/app/a", "--", "-5")
	mustZkc(t, "create", root+"/app/a/x")
	mustZkc(t, "create", root+"/app-z")

	if out := mustZkc(t, "ls", root+"/app"); out != "a\nb\n" {
		t.Errorf("ls: %q", out)
	}
	var names []string
	if err := json.Unmarshal([]byte(mustZkc(t, "ls", root, "--json")), &names); err != nil || !slices.Equal(names, []string{"app", "app-z"}) {
		t.Errorf("ls --json: %q, %v", names, err)
	}
	want := strings.Join([]string{root, root + "/app", root + "/app/a", root + "/app/a/x", root + "/app/b", root + "/app-z"}, "\n") + "\n"
	if out := mustZkc(t, "ls", "-R", root); out != want {
		t.Errorf("ls -R: got\n%swant\n%s", out, want)
	}
	if err := json.Unmarshal([]byte(mustZkc(t, "ls", root+"/app/a", "--recursive", "--json")), &names); err != nil ||
		!slices.Equal(names, []string{root + "/app/a", root + "/app/a/x"}) {
		t.Errorf("ls -R --json: %q, %v", names, err)
	}

	// To a pipe, get writes the data as it is, without a newline.
	if out := mustZkc(t, "get", root+"/app"); out != "hello" {
		t.Errorf("get: %q", out)
	}
	if out := mustZkc(t, "get", root+"/app/a"); out != "-5" {
		t.Errorf("get of data given after --: %q", out)
	}
	_, st, err := sess.Get(ctx, root+"/app")
	if err != nil {
		t.Fatal(err)
	}
	var node nodeJSON
	if err := json.Unmarshal([]byte(mustZkc(t, "get", root+"/app", "--json")), &node); err != nil {
		t.Fatal(err)
	}
	if node.Path != root+"/app" || node.Data != "hello" || node.Encoding != "utf-8" || node.Stat.Czxid != st.Czxid ||
		node.Stat.NumChildren != 2 || node.Stat.EphemeralOwner != "0x0" {
		t.Errorf("get --json: %+v %+v", node, node.Stat)
	}

	out := mustZkc(t, "stat", root+"/app")
	for _, line := range []string{fmt.Sprintf("cZxid = 0x%x", st.Czxid), "dataVersion = 0", "numChildren = 2",
		"dataLength = 5", "ephemeralOwner = 0x0", "ctime = " + time.UnixMilli(st.Ctime).Format("2006-01-02T15:04:05.000Z07:00")} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("stat: no %q in\n%s", line, out)
		}
	}
	sj := pathStatJSON{statJSON: &statJSON{}}
	if err := json.Unmarshal([]byte(mustZkc(t, "stat", root+"/app", "--json")), &sj); err != nil {
		t.Fatal(err)
	}
	if sj.Path != root+"/app" || sj.Czxid != st.Czxid || sj.Mzxid != st.Mzxid || sj.Pzxid != st.Pzxid ||
		!sj.Ctime.Equal(time.UnixMilli(st.Ctime)) || sj.DataLength != 5 || sj.NumChildren != 2 {
		t.Errorf("stat --json: %+v, want %+v", sj.statJSON, st)
	}

	// set: from an argument, at a version, from standard input.
	mustZkc(t, "set", root+"/app", "v1")
	wantFail(t, zkc(t, "set", root+"/app", "v2", "--version", "0"), exitFailure,
		"set "+root+"/app: its data version is 1, not 0")
	if err := json.Unmarshal([]byte(mustZkc(t, "set", root+"/app", "v2", "--version", "1", "--json")), &sj); err != nil || sj.Version != 2 {
		t.Errorf("set --version 1 --json: %+v, %v", sj.statJSON, err)
	}
	binary := []byte{0, 1, 2, 0xff, 0xfe, '\n', 0x1b, '[', '3', '1', 'm'}
	if r := zkcInput(t, binary, "set", root+"/app", "-"); r.code != 0 {
		t.Fatalf("set from standard input: %s", r)
	}
	if data, _, err := sess.Get(ctx, root+"/app"); err != nil || !bytes.Equal(data, binary) {
		t.Errorf("after set -: %q, %v", data, err)
	}
	if out := mustZkc(t, "get", root+"/app"); out != string(binary) {
		t.Errorf("get of binary data to a pipe: %q", out)
	}
	if err := json.Unmarshal([]byte(mustZkc(t, "get", root+"/app", "--json")), &node); err != nil {
		t.Fatal(err)
	}
	if got, err := base64.StdEncoding.DecodeString(node.Data); node.Encoding != "base64" || err != nil || !bytes.Equal(got, binary) {
		t.Errorf("get --json of binary data: %+v", node)
	}
	if r := zkcInput(t, make([]byte, maxInput+1), "set", root+"/app", "-"); r.code != exitFailure || !strings.Contains(r.stderr, "more than") {
		t.Errorf("set of too much data: %s", r)
	}
	if data, _, err := sess.Get(ctx, root+"/app"); err != nil || !bytes.Equal(data, binary) {
		t.Errorf("a refused set changed the data: %q, %v", data, err)
	}

	missing := root + "/missing"
	for _, args := range [][]string{
		{"get", missing}, {"stat", missing}, {"ls", missing}, {"ls", "-R", missing}, {"set", missing, "x"},
		{"rm", missing}, {"rm", "-r", missing, "--yes"}, {"acl", "get", missing}, {"ephemerals", missing},
	} {
		wantFail(t, zkc(t, args...), exitFailure, "zkcoord: no node "+missing+"\n")
	}
	for _, args := range [][]string{
		{"get", "relative"}, {"ls"}, {"set", root}, {"get", root, "--raw", "--json"}, {"set", root, "x", "--version", "-2"},
		{"create", "/"}, {"stat", root, root},
	} {
		if r := zkc(t, args...); r.code != exitUsage {
			t.Errorf("zkcoord %s: want exit 2, got %s", strings.Join(args, " "), r)
		}
	}
}

// create: sequential, from standard input, a missing parent, a node that
// exists, TTL nodes on a server without them, and an ephemeral node that
// lives until zkcoord is interrupted.
func TestTreeCreate(t *testing.T) {
	t.Parallel()
	root := unique(t)
	sess := session(t)
	ctx := t.Context()
	wantFail(t, zkc(t, "create", root+"/a"), exitFailure, "no node "+root+", the parent of "+root+"/a (--parents creates it)")
	mustZkc(t, "create", root, "--parents")
	wantFail(t, zkc(t, "create", root), exitFailure, root+" already exists")
	wantFail(t, zkc(t, "create", root, "--parents"), exitFailure, root+" already exists")

	var c createdJSON
	if err := json.Unmarshal([]byte(mustZkc(t, "create", root+"/job-", "one", "--sequential", "--json")), &c); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Path, root+"/job-") || len(c.Path) != len(root+"/job-")+10 || c.Stat == nil {
		t.Fatalf("create --sequential --json: %+v", c)
	}
	if _, st, err := sess.Get(ctx, c.Path); err != nil || st.Czxid != c.Stat.Czxid {
		t.Errorf("the sequential node: %v, %v (create said czxid %d)", st, err, c.Stat.Czxid)
	}
	if r := zkcInput(t, []byte("from\x00stdin"), "create", root+"/in", "-"); r.code != 0 || r.stdout != root+"/in\n" {
		t.Fatalf("create from standard input: %s", r)
	}
	if data, _, err := sess.Get(ctx, root+"/in"); err != nil || string(data) != "from\x00stdin" {
		t.Errorf("created from standard input: %q, %v", data, err)
	}

	wantFail(t, zkc(t, "create", root+"/ttl", "--ttl", "1m"), exitFailure, "does not accept TTL nodes")
	wantFail(t, zkc(t, "create", root+"/ttl", "--ttl", "1m", "--ephemeral"), exitUsage, "--ttl and --ephemeral")
	wantFail(t, zkc(t, "create", root+"/ttl", "--ttl", "-1s"), exitUsage, "--ttl must be")

	eph := start(t, nil, "create", root+"/eph", "live", "--ephemeral")
	testkit.Eventually(t, 30*time.Second, "the ephemeral node", func() bool { return len(eph.stdout()) > 0 })
	if got := eph.stdout(); got[0] != root+"/eph" {
		t.Fatalf("create --ephemeral printed %q", got)
	}
	_, st, err := sess.Get(ctx, root+"/eph")
	if err != nil || st.EphemeralOwner == 0 {
		t.Fatalf("the ephemeral node: %+v, %v", st, err)
	}
	wantFail(t, zkc(t, "create", root+"/eph/child"), exitFailure, root+"/eph is ephemeral and cannot have children")
	if err := syscall.Kill(eph.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := eph.exitCode(t, 30*time.Second); code != 0 {
		t.Fatalf("create --ephemeral exited %d after SIGTERM; stderr:\n%s", code, eph.Stderr())
	}
	if ok, _, err := sess.Exists(ctx, root+"/eph"); err != nil || ok {
		t.Errorf("the ephemeral node outlived zkcoord: %v, %v", ok, err)
	}
}

// rm deletes a leaf, at a version; refuses a node with children; rm -r
// refuses without --yes when it cannot ask, deletes a subtree with it,
// and says how far it got when it stops part way.
func TestTreeRemove(t *testing.T) {
	t.Parallel()
	root := unique(t)
	sess := session(t)
	ctx := t.Context()
	for _, p := range []string{"/a/b/c", "/a/d", "/leaf"} {
		if err := sess.EnsurePath(ctx, root+p); err != nil {
			t.Fatal(err)
		}
	}
	wantFail(t, zkc(t, "rm", root+"/leaf", "--version", "3"), exitFailure, "its data version is 0, not 3")
	if r := zkc(t, "rm", root+"/leaf", "--version", "0"); r.code != 0 || r.stdout != "" {
		t.Errorf("rm --version 0: %s", r)
	}
	wantFail(t, zkc(t, "rm", root+"/a"), exitFailure, "rm "+root+"/a: it has 2 children: 'zkcoord rm -r'")
	wantFail(t, zkc(t, "rm", "-r", root+"/a"), exitUsage, "nothing deleted: deleting "+root+"/a and everything below it needs --yes")
	wantFail(t, zkc(t, "rm", "-r", root+"/a", "--version", "1", "--yes"), exitUsage, "--version")
	wantFail(t, zkc(t, "rm", "-r", "/", "--yes"), exitUsage, "refusing to delete /")
	if n, err := sess.CountDescendants(ctx, root+"/a"); err != nil || n != 3 {
		t.Fatalf("after the refusals, %s has %d nodes below it (%v), want 3", root+"/a", n, err)
	}
	if out := mustZkc(t, "rm", "-r", root+"/a", "--yes"); out != "deleted 4 nodes\n" {
		t.Errorf("rm -r --yes: %q", out)
	}
	if ok, _, err := sess.Exists(ctx, root+"/a"); err != nil || ok {
		t.Errorf("after rm -r: %v, %v", ok, err)
	}
	var d deletedJSON
	if err := json.Unmarshal([]byte(mustZkc(t, "rm", "-r", "--yes", "--json", root)), &d); err != nil || d.Deleted != 1 || d.Path != root {
		t.Errorf("rm -r --json: %+v, %v", d, err)
	}
}

// A recursive delete that a node's ACL stops part way says how many nodes
// it deleted and leaves the rest.
func TestTreeRemovePartly(t *testing.T) {
	t.Parallel()
	root := unique(t)
	sess := session(t)
	ctx := t.Context()
	// Deepest first: the 600 leaves below deep/d go in the first two
	// transactions (of 500, then 100 and what is left), and the second
	// fails on locked/c, which locked's ACL forbids deleting.
	if err := sess.EnsurePath(ctx, root+"/deep/d"); err != nil {
		t.Fatal(err)
	}
	if err := sess.EnsurePath(ctx, root+"/locked/c"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 600; i += 100 {
		var ops []zkcoord.Op
		for j := i; j < i+100; j++ {
			ops = append(ops, zkcoord.CreateOp(fmt.Sprintf("%s/deep/d/n%03d", root, j), nil, zkcoord.FlagPersistent))
		}
		if _, err := sess.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sess.SetACL(ctx, root+"/locked", zkcoord.WorldACL(zkcoord.PermAll&^zkcoord.PermDelete), -1); err != nil {
		t.Fatal(err)
	}
	r := zkc(t, "rm", "-r", root, "--yes")
	wantFail(t, r, exitFailure, "rm -r "+root+": deleted 500 of the 605 nodes counted, then stopped; the rest is still there")
	wantFail(t, r, exitFailure, "give credentials with --auth")
	if n, err := sess.CountDescendants(ctx, root); err != nil || n != 104 {
		t.Errorf("after the partial delete, %d nodes below %s (%v), want 104", n, root, err)
	}
}

// acl get prints entries as acl set takes them; acl set replaces them,
// at a version; entries that do not parse change nothing. ZooKeeper hides
// a digest's hash from a client that may not administer the node.
func TestTreeACL(t *testing.T) {
	t.Parallel()
	path := unique(t)
	sess := session(t)
	ctx := t.Context()
	if err := sess.EnsurePath(ctx, path+"/open"); err != nil {
		t.Fatal(err)
	}
	if out := mustZkc(t, "acl", "get", path); out != "world:anyone:cdrwa\n" {
		t.Errorf("acl get: %q", out)
	}
	hash := zkcoord.DigestACL(0, "alice", "secret")[0].ID
	mustZkc(t, "acl", "set", path, "world:anyone:r", "digest:"+hash+":cdrwa", "ip:10.0.0.0/8:rw", "--version", "0")
	alice := "--auth=alice:secret"
	want := "world:anyone:r\ndigest:" + hash + ":cdrwa\nip:10.0.0.0/8:rw\n"
	if out := mustZkc(t, "acl", "get", path, alice); out != want {
		t.Errorf("acl get after acl set: got\n%swant\n%s", out, want)
	}
	if out := mustZkc(t, "acl", "get", path); out != "world:anyone:r\ndigest:alice:x:cdrwa\nip:10.0.0.0/8:rw\n" {
		t.Errorf("acl get by a client that may not administer the node: %q", out)
	}
	var aj aclJSON
	if err := json.Unmarshal([]byte(mustZkc(t, "acl", "get", path, "--json", alice)), &aj); err != nil {
		t.Fatal(err)
	}
	if aj.Path != path || aj.Aversion != 1 || len(aj.ACL) != 3 || aj.ACL[1] != (aclEntryJSON{"digest", hash, "cdrwa"}) {
		t.Errorf("acl get --json: %+v", aj)
	}
	wantFail(t, zkc(t, "acl", "set", path, "world:anyone:cdrwa", "--version", "0", alice), exitFailure,
		"acl set "+path+": its ACL version is 1, not 0")
	wantFail(t, zkc(t, "acl", "set", path, "world:anyone:cdrwa"), exitFailure, "give credentials with --auth")
	for _, c := range []struct{ entry, want string }{
		{"world:anyone", "want scheme:id:permissions"},
		{"world:everyone:r", "the id of world is anyone"},
		{"world:anyone:rx", `unknown permission 'x'`},
		{"world:anyone:", "no permissions"},
		{"digest:alice:secret:cdrwa", "not the password"},
		{"digest:alice:x:cdrwa", "hides the hash"},
		{"ip:10.0.0.300:r", "the id of ip is an address"},
		{"world:anyone:r,auth::cdrwa", "give each entry as its own argument"},
		{"x509::r", "no id for scheme x509"},
	} {
		wantFail(t, zkc(t, "acl", "set", path, "world:anyone:cdrwa", c.entry, alice), exitUsage, c.want)
	}
	wantFail(t, zkc(t, "acl", "set", path), exitUsage, "missing ACL")
	wantFail(t, zkc(t, "acl", "set", path, "world:anyone:r", "--json"), exitUsage, "--json is for acl get")
	wantFail(t, zkc(t, "acl", "get", path, "--version", "1"), exitUsage, "--version is for acl set")
	if out := mustZkc(t, "acl", "get", path, alice); out != want {
		t.Errorf("bad entries changed the ACL:\n%s", out)
	}
	wantFail(t, zkc(t, "acl", "set", path+"/open", "auth::cdrwa"), exitFailure, "the server refused the ACL")
	mustZkc(t, "acl", "set", path+"/open", "auth::cdrwa", alice)
	if out := mustZkc(t, "acl", "get", path+"/open", alice); out != "digest:"+hash+":cdrwa\n" {
		t.Errorf("acl get after acl set auth::cdrwa: %q", out)
	}
}

// The connection flags: with --auth and --acl creator the nodes created are
// the user's, and what others may not read says so; whoami shows the
// identities; --chroot puts everything under the chroot.
func TestTreeAuthAndChroot(t *testing.T) {
	t.Parallel()
	root := unique(t)
	sess := session(t)
	ctx := t.Context()
	alice := []string{"--auth", "alice:secret", "--acl", "creator"}
	mustZkc(t, "create", root, "--parents")
	mustZkc(t, append([]string{"create", root + "/private", "mine"}, alice...)...)
	hash := zkcoord.DigestACL(0, "alice", "secret")[0].ID
	if out := mustZkc(t, "acl", "get", root+"/private", "--auth", "alice:secret"); out != "digest:"+hash+":cdrwa\n" {
		t.Errorf("acl of a node created with --acl creator: %q", out)
	}
	if out := mustZkc(t, "get", root+"/private", "--auth", "alice:secret"); out != "mine" {
		t.Errorf("get with the creator's credentials: %q", out)
	}
	r := zkc(t, "get", root+"/private")
	wantFail(t, r, exitFailure, "zkcoord: get "+root+"/private: ")
	wantFail(t, r, exitFailure, "give credentials with --auth or ZKCOORD_AUTH")
	// Anyone may list root, whose ACL is open, not what is below private.
	mustZkc(t, append([]string{"create", root + "/private/inner"}, alice...)...)
	r = zkc(t, "ls", "-R", root)
	if r.code != exitFailure || r.stdout != root+"\n"+root+"/private\n" || !strings.Contains(r.stderr, "not allowed to list what is below "+root+"/private") {
		t.Errorf("ls -R of a tree with a node it may not read: %s", r)
	}

	var ids []identityJSON
	if err := json.Unmarshal([]byte(mustZkc(t, "whoami", "--auth", "alice:secret", "--json")), &ids); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, identityJSON{"digest", "alice"}) || !slices.Contains(ids, identityJSON{"ip", "127.0.0.1"}) {
		t.Errorf("whoami --json: %+v", ids)
	}
	if out := mustZkc(t, "whoami"); !strings.HasPrefix(out, "ip") || !strings.Contains(out, "127.0.0.1") || strings.Contains(out, "digest") {
		t.Errorf("whoami: %q", out)
	}

	chroot := root + "/chroot"
	if out := mustZkc(t, "--chroot", chroot, "create", "/a/b", "x", "--parents"); out != "/a/b\n" {
		t.Errorf("create under a chroot printed %q", out)
	}
	if data, _, err := sess.Get(ctx, chroot+"/a/b"); err != nil || string(data) != "x" {
		t.Errorf("the node created under the chroot: %q, %v", data, err)
	}
	if out := mustZkc(t, "--chroot", chroot, "ls", "-R", "/"); out != "/\n/a\n/a/b\n" {
		t.Errorf("ls -R / under the chroot: %q", out)
	}
	if out := mustZkc(t, "--chroot", chroot, "get", "/a/b"); out != "x" {
		t.Errorf("get under the chroot: %q", out)
	}
	if out := mustZkc(t, "--chroot", chroot, "rm", "-r", "/a", "--yes"); out != "deleted 2 nodes\n" {
		t.Errorf("rm -r under the chroot: %q", out)
	}
	wantFail(t, zkc(t, "--chroot", chroot, "rm", "-r", "/", "--yes"), exitUsage, "refusing to delete /")
}

// ephemerals lists the ephemeral nodes of a subtree with their sessions.
func TestTreeEphemerals(t *testing.T) {
	t.Parallel()
	root := unique(t)
	mustZkc(t, "create", root+"/workers", "--parents")
	mustZkc(t, "create", root+"/workers/persistent")
	w := start(t, nil, "create", root+"/workers/w1", "--ephemeral")
	testkit.Eventually(t, 30*time.Second, "the ephemeral node", func() bool { return len(w.stdout()) > 0 })
	sess := session(t)
	_, st, err := sess.Get(t.Context(), root+"/workers/w1")
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("0x%x", st.EphemeralOwner)
	out := mustZkc(t, "ephemerals", root)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || strings.Join(strings.Fields(lines[1]), " ") != root+"/workers/w1 "+id {
		t.Errorf("ephemerals: %q", out)
	}
	var found []ephemeralJSON
	if err := json.Unmarshal([]byte(mustZkc(t, "ephemerals", root, "--session", id, "--json")), &found); err != nil ||
		!slices.Equal(found, []ephemeralJSON{{root + "/workers/w1", id}}) {
		t.Errorf("ephemerals --session %s --json: %+v, %v", id, found, err)
	}
	if out := mustZkc(t, "ephemerals", root, "--session", "0x1"); out != "" {
		t.Errorf("ephemerals of another session: %q", out)
	}
	if out := mustZkc(t, "ephemerals", root, "--json", "--session", "1"); out != "[]\n" {
		t.Errorf("ephemerals --json of another session: %q", out)
	}
	wantFail(t, zkc(t, "ephemerals", root, "--session", "w1"), exitUsage, "--session")
}

// server stat shows each server; one that does not answer is named, and
// makes the exit status 1.
func TestTreeServerStat(t *testing.T) {
	t.Parallel()
	addr := cluster.Servers()[0]
	out := mustZkc(t, "server", "stat")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "SERVER") || !strings.HasPrefix(lines[1], addr) ||
		!strings.Contains(lines[1], "standalone") || !strings.Contains(lines[1], "3.") {
		t.Errorf("server stat: %q", out)
	}
	var stats []serverStatJSON
	if err := json.Unmarshal([]byte(mustZkc(t, "server", "stat", "--json")), &stats); err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].Server != addr || stats[0].Mode != "standalone" || stats[0].NodeCount < 1 ||
		!strings.HasPrefix(stats[0].Zxid, "0x") || stats[0].Mntr["zk_server_state"] != "standalone" {
		t.Errorf("server stat --json: %+v", stats)
	}
	r := zkc(t, "server", "stat", addr, "127.0.0.1:1")
	wantFail(t, r, exitFailure, "1 of 2 servers did not answer: 127.0.0.1:1: ")
	if !strings.Contains(r.stdout, "standalone") || !strings.Contains(r.stdout, "127.0.0.1:1 ") {
		t.Errorf("server stat with a server down: %s", r)
	}
	wantFail(t, zkc(t, "server", "stat", "nonsense"), exitUsage, "want host:port")
	wantFail(t, zkc(t, "server"), exitUsage, "missing subcommand")
}

// create --ttl makes a TTL node on a server that allows them: the server
// deletes it once unchanged and childless for its TTL, and ephemerals does
// not take the TTL it keeps in ephemeralOwner for a session.
func TestTreeCreateTTL(t *testing.T) {
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+
		" -Dzookeeper.extendedTypesEnabled=true -Dznode.container.checkIntervalMs=100"))
	c := zktest.Start(t)
	env := testEnv(c.ConnectString())
	r := zkcEnv(t, env, "create", "/kept", "--ttl", "1h")
	if r.code != 0 || r.stdout != "/kept\n" {
		t.Fatalf("create --ttl 1h: %s", r)
	}
	if r := zkcEnv(t, env, "create", "/short", "x", "--ttl", "200ms"); r.code != 0 {
		t.Fatalf("create --ttl 200ms: %s", r)
	}
	if r := zkcEnv(t, env, "ephemerals", "/"); r.code != 0 || r.stdout != "" {
		t.Errorf("ephemerals lists TTL nodes: %s", r)
	}
	testkit.Eventually(t, 30*time.Second, "the server to delete the TTL node", func() bool {
		r := zkcEnv(t, env, "stat", "/short")
		return r.code == exitFailure && strings.Contains(r.stderr, "no node /short")
	})
	if r := zkcEnv(t, env, "stat", "/kept"); r.code != 0 {
		t.Errorf("the TTL node of an hour is gone: %s", r)
	}
}
