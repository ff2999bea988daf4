package main

import (
	"strings"
	"testing"
	"time"
)

// Every command has a help text, and the top-level help documents the
// environment and the exit codes.
func TestHelp(t *testing.T) {
	t.Parallel()
	r := zkc(t, "help")
	if r.code != 0 || !strings.Contains(r.stdout, "Exit codes:") || !strings.Contains(r.stdout, "ZKCOORD_SERVERS") {
		t.Fatalf("zkcoord help: %s", r)
	}
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {"help", c.name}} {
			r := zkc(t, args...)
			if r.code != 0 || !strings.Contains(r.stdout, "Usage: zkcoord "+c.name) || !strings.Contains(r.stdout, "Exit codes") {
				t.Errorf("zkcoord %s: %s", strings.Join(args, " "), r)
			}
		}
	}
}

// Bad command lines fail with status 2 and say what is wrong.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		env  []string
		want string
	}{
		{args: nil, want: "missing command"},
		{args: []string{"frobnicate"}, want: `unknown command "frobnicate"`},
		{args: []string{"lock"}, want: "lock: missing PATH"},
		{args: []string{"lock", "/x", "--bogus"}, want: "unknown flag --bogus"},
		{args: []string{"lock", "/x", "--wait", "soon"}, want: `invalid value "soon" for --wait`},
		{args: []string{"lock", "no-slash", "--", "true"}, want: "invalid path"},
		{args: []string{"lock", "/a", "/b"}, want: `unexpected argument "/b"`},
		{args: []string{"rebalance", "g"}, want: "missing the command to run"},
		{args: []string{"rebalance", "g", "--exec", "x", "--mode", "sideways"}, want: "unknown mode"},
		{args: []string{"rebalance", "g", "--exec", "x", "--restart", "sometimes"}, want: "--restart"},
		{args: []string{"resources", "list", "g"}, want: `unknown subcommand "list"`},
		{args: []string{"resources", "add", "g"}, want: "missing RESOURCE"},
		{args: []string{"queue"}, want: "missing subcommand"},
		{args: []string{"counter", "add", "/c", "x"}, want: "not a 32-bit integer"},
		{args: []string{"status", "g", "--log-level", "loud"}, want: "--log-level"},
		{args: []string{"status", "g", "--acl", "creator"}, want: "--acl creator needs --auth"},
		{args: []string{"status", "g"}, env: []string{"ZKCOORD_SESSION_TIMEOUT=soon"}, want: "ZKCOORD_SESSION_TIMEOUT"},
		{args: []string{"demo", "--workers", "1"}, want: "--workers"},
	}
	for _, c := range cases {
		r := zkcEnv(t, append(testEnv(cluster.ConnectString()), c.env...), c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("zkcoord %s: want exit 2 and %q in stderr, got %s", strings.Join(c.args, " "), c.want, r)
		}
	}
}

// Servers that do not answer give a clear message and status 1.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r := zkc(t, "--zk", "127.0.0.1:1", "--connect-timeout", "2s", "status", "g")
	if r.code != exitFailure || !strings.Contains(r.stderr, "cannot reach ZooKeeper at 127.0.0.1:1 within 2s") {
		t.Fatalf("want exit 1 and a clear message, got %s", r)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v to give up", d)
	}
	r = zkc(t, "--zk", "nonsense", "status", "g")
	if r.code != exitUsage || !strings.Contains(r.stderr, "host:port") {
		t.Fatalf("want exit 2 for a malformed server, got %s", r)
	}
}
