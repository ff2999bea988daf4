//go:build unix

package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// Every command has a help text listing its own flags, and the top-level
// help documents the environment and the exit codes.
func TestHelp(t *testing.T) {
	t.Parallel()
	r := zkc(t, "help")
	if r.code != 0 || !strings.Contains(r.stdout, "Exit codes:") || !strings.Contains(r.stdout, "ZKCOORD_SERVERS") {
		t.Fatalf("zkcoord help: %s", r)
	}
	// The flags of each command, as its help shows them.
	own := map[string][]string{
		"lock": {"--read", "--write", "--limit N", "--wait DURATION", "--try", "--grace DURATION", "--data DATA", "--revocable",
			"--limit-from PATH", "--kazoo", "--lock-delay DURATION", "--json"},
		"elect": {"--id ID", "--fence FENCE", "--fence-timeout DURATION", "--data DATA", "--grace DURATION", "--rejoin", "--no-recover",
			"--revocable", "--health HEALTH", "--health-interval DURATION", "--health-failures N", "--lock-delay DURATION", "--json"},
		"leader": {"--json", "--watch"},
		"rebalance": {"--exec COMMAND", "--mode MODE", "--root PATH", "--name NAME", "--grace DURATION",
			"--restart POLICY", "--restart-delay DURATION", "--max-restarts N", "--min-interval DURATION",
			"--start-delay DURATION", "--lock-delay DURATION", "--weight WEIGHT", "--no-recover", "--events"},
		"resources":  {"--root PATH", "--json"},
		"status":     {"--root PATH", "--json", "--watch"},
		"barrier":    {"--timeout DURATION", "--members N", "--ephemeral"},
		"queue":      {"--priority PRIORITY", "-n N", "--no-wait", "--timeout DURATION", "--work", "--json"},
		"counter":    {"--seed VALUE", "--json"},
		"locks":      {"--kind KIND", "--json"},
		"election":   {"--json", "--wait DURATION"},
		"watch":      {"--tree", "--depth N", "--json"},
		"ls":         {"--recursive", "--json"},
		"get":        {"--raw", "--json"},
		"stat":       {"--json"},
		"set":        {"--version N", "--json"},
		"create":     {"--parents", "--sequential", "--ephemeral", "--ttl DURATION", "--json"},
		"rm":         {"--recursive", "--version N", "--yes", "--json"},
		"acl":        {"--json", "--version N"},
		"whoami":     {"--json"},
		"ephemerals": {"--session ID", "--json"},
		"server":     {"--json"},
		"ensemble":   {"--json", "--from-version VERSION"},
		"ui":         {"--listen ADDRESS", "--root PATH", "--path [KIND:]PATH", "--admin", "--host NAME"},
		"services":   {"--json", "--address ADDRESS", "--port PORT", "--id ID", "--payload JSON", "--no-recover"},
		"demo": {"--workers N", "--resources N", "--worker-session-timeout DURATION", "--plain", "--history FILE",
			"--pace DURATION", "--ui ADDRESS"},
	}
	// Help asked for after a subcommand shows the same.
	subs := map[string]string{"resources": "add", "barrier": "enter", "queue": "take", "counter": "add",
		"locks": "ls", "election": "ls", "services": "get", "acl": "set", "server": "stat", "ensemble": "show"}
	seen := map[string]bool{}
	for _, c := range newRootCommand(&app{App: cli.NewApp(nil, io.Discard, io.Discard)}).Commands() {
		cname := c.Name()
		if cname == "help" || cname == "completion" {
			continue
		}
		seen[cname] = true
		flags, ok := own[cname]
		if !ok {
			t.Errorf("no flags listed for %s in the test", cname)
		}
		forms := [][]string{{cname, "--help"}, {"help", cname}, {cname, "-h"}}
		if sub, ok := subs[cname]; ok {
			forms = append(forms, []string{cname, sub, "--help"}, []string{cname, "help"})
		}
		// The first line of the description, indentation included; the
		// demo's help is zkcoord-demo's.
		first := strings.SplitN(strings.TrimLeft(c.Long, "\n"), "\n", 2)[0]
		if cname == "demo" {
			first = "Start a few worker processes that share resources through ZooKeeper with"
		}
		for _, args := range forms {
			name := "zkcoord " + strings.Join(args, " ")
			r := zkc(t, args...)
			if r.code != 0 || !strings.Contains(r.stdout, "Usage: zkcoord "+cname) || !strings.Contains(r.stdout, "Exit codes") {
				t.Errorf("%s: %s", name, r)
				continue
			}
			if !strings.Contains(r.stdout, "\n\n"+first+"\n") {
				t.Errorf("%s: the description does not start with %q:\n%s", name, first, r.stdout)
			}
			_, ownPart, _ := strings.Cut(r.stdout, "\nFlags:\n")
			ownPart, _, _ = strings.Cut(ownPart, "\n\n")
			for _, f := range flags {
				if !strings.Contains(ownPart+"\n", "  "+f+" ") && !strings.Contains(ownPart+"\n", "  "+f+"\n") {
					t.Errorf("%s: the flags do not list %q:\n%s", name, f, r.stdout)
				}
			}
			if n := strings.Count(ownPart, "\n  -") + 1; ownPart == "" || n != len(flags) {
				t.Errorf("%s: want %d flags of its own, got:\n%s", name, len(flags), ownPart)
			}
			// Internal "not given" values do not show as defaults.
			if strings.Contains(r.stdout, "(default -") {
				t.Errorf("%s: a negative default shows:\n%s", name, r.stdout)
			}
		}
	}
	for cname := range own {
		if !seen[cname] {
			t.Errorf("zkcoord help does not list %s", cname)
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
		{args: []string{"queue", "put", "/q", "x", "--priority", "-1"}, want: "--priority must be in [0, 999]"},
		{args: []string{"queue", "take", "/q", "-n", "0"}, want: "-n must be at least 1"},
		{args: []string{"queue", "take", "/q", "-n", "x"}, want: `invalid value "x" for -n`},
		{args: []string{"demo", "--pace", "-1s"}, want: "--pace must not be negative"},
		{args: []string{"counter", "add", "/c", "x"}, want: "not a 32-bit integer"},
		{args: []string{"status", "g", "--log-level", "loud"}, want: "--log-level"},
		{args: []string{"status", "g", "--acl", "creator"}, want: "--acl creator needs --auth"},
		{args: []string{"status", "g"}, env: []string{"ZKCOORD_SESSION_TIMEOUT=soon"}, want: "ZKCOORD_SESSION_TIMEOUT"},
		{args: []string{"demo", "--workers", "1"}, want: "--workers"},
		{args: []string{"help", "bogus"}, want: `unknown command "bogus"`},
		{args: []string{"--json", "status", "g"}, want: "unknown flag --json"},
		{args: []string{"lock", "break"}, want: "lock break: missing PATH"},
		{args: []string{"lock", "break", "/x"}, want: "--yes"},
		{args: []string{"locks", "ls", "/x", "--kind", "table"}, want: "--kind"},
		{args: []string{"services", "register", "/s", "n", "--port", "80"}, want: "--address"},
		{args: []string{"elect", "/e", "--health", "true", "--health-failures", "0"}, want: "--health-failures"},
		{args: []string{"watch", "/w", "--depth", "1"}, want: "--depth needs --tree"},
		{args: []string{"ui", "--path", "bogus:/x"}, want: "unknown kind"},
	}
	for _, c := range cases {
		r := zkcEnv(t, append(testEnv(cluster.ConnectString()), c.env...), c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("zkcoord %s: want exit 2 and %q in stderr, got %s", strings.Join(c.args, " "), c.want, r)
		}
	}
}

// Servers that do not answer give a clear message and status 1, once the
// connect timeout (short here: nothing can answer) has passed.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r := zkc(t, "--zk", "127.0.0.1:1", "--connect-timeout", "1s", "status", "g")
	if r.code != exitFailure || !strings.Contains(r.stderr, "cannot reach ZooKeeper at 127.0.0.1:1 within 1s") {
		t.Fatalf("want exit 1 and a clear message, got %s", r)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v to give up", d)
	}
	// So do the commands that ride out an incident, at their start.
	for _, args := range [][]string{{"watch", "/w"}, {"ui", "--listen", "127.0.0.1:0"}, {"elect", "/e"},
		{"services", "register", "/s", "n", "--address", "a", "--port", "1"}} {
		r := zkc(t, append([]string{"--zk", "127.0.0.1:1", "--connect-timeout", "1s"}, args...)...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "cannot reach ZooKeeper at 127.0.0.1:1 within 1s") {
			t.Errorf("%s: want exit 1 and a clear message, got %s", args[0], r)
		}
	}
	// A host without a port is ZooKeeper's port 2181 of that host, as in
	// zkCli's connect strings; an unknown one is reported with its reason
	// at once, then the command gives up.
	r = zkc(t, "--zk", "nonsense.invalid", "--connect-timeout", "2s", "status", "g")
	if r.code != exitFailure || !strings.Contains(r.stderr, "nonsense.invalid:2181") || !strings.Contains(r.stderr, "no such host") {
		t.Fatalf("want exit 1 naming the unknown host and the reason, got %s", r)
	}
	r = zkc(t, "--zk", "a:b:c", "status", "g")
	if r.code != exitUsage || !strings.Contains(r.stderr, "IPv6") {
		t.Fatalf("want exit 2 for a malformed server, got %s", r)
	}
}

// Shell completion scripts are generated for the usual shells, and the
// completion of a command name offers the commands.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{"bash": "complete -o default", "zsh": "#compdef zkcoord",
		"fish": "complete -c zkcoord"} {
		r := zkc(t, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("zkcoord completion %s: want %q in:\n%.300s", shell, want, r)
		}
	}
	r := zkc(t, "__complete", "lo")
	if r.code != 0 || !strings.Contains(r.stdout, "lock\t") {
		t.Errorf("completing lo: %s", r)
	}
	r = zkc(t, "__complete", "lock", "/x", "--gr")
	if r.code != 0 || !strings.Contains(r.stdout, "--grace\t") {
		t.Errorf("completing lock's flags: %s", r)
	}
	r = zkc(t, "__complete", "status", "g", "--log-level", "")
	if r.code != 0 || !strings.Contains(r.stdout, "debug\n") {
		t.Errorf("completing --log-level: %s", r)
	}
	r = zkc(t, "__complete", "locks", "ls", "/x", "--kind", "rw")
	if r.code != 0 || !strings.Contains(r.stdout, "rwlock\n") {
		t.Errorf("completing --kind: %s", r)
	}
}

// Completion offers what each argument takes: nodes of the server for a
// path, groups, a group's resources, services; nothing for data.
func TestCompletionOffersArguments(t *testing.T) {
	t.Parallel()
	p := unique(t)
	mustZkc(t, "create", "--parents", p+"/app/a")
	mustZkc(t, "create", p+"/app/b")
	mustZkc(t, "create", p+"/other")
	mustZkc(t, "create", "--parents", p+"/services/billing")
	mustZkc(t, "resources", "add", "--root", p+"/groups", "g", "r1", "r2")
	complete := func(want []string, directive string, args ...string) {
		t.Helper()
		r := zkc(t, append([]string{"__complete"}, args...)...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || len(lines) == 0 || !slices.Equal(lines[:len(lines)-1], want) || lines[len(lines)-1] != directive {
			t.Errorf("zkcoord __complete %s: want %q then %s, got %s", strings.Join(args, " "), want, directive, r)
		}
	}
	const paths, none, names = ":6", ":4", ":4" // no file names; for paths, no space either
	complete([]string{p + "/app"}, paths, "ls", p+"/ap")
	complete([]string{p + "/app/a", p + "/app/b"}, paths, "get", p+"/app/")
	complete([]string{p + "/app/a", p + "/app/b"}, paths, "lock", p+"/app/")
	complete([]string{p + "/other"}, paths, "rm", "-r", p+"/o")
	complete([]string{p + "/app/b"}, paths, "watch", "--tree", p+"/app/b")
	complete(nil, none, "set", p+"/app/a", "")
	complete(nil, none, "lock", p+"/app/a", "--", "")
	complete([]string{"g"}, names, "status", "--root", p+"/groups", "")
	complete([]string{"r1", "r2"}, names, "resources", "rm", "--root", p+"/groups", "g", "")
	complete([]string{"r2"}, names, "resources", "rm", "--root", p+"/groups", "g", "r1", "")
	complete(nil, none, "resources", "add", "--root", p+"/groups", "g", "")
	complete([]string{"billing"}, names, "services", "get", p+"/services", "")
	complete([]string{p + "/groups"}, paths, "status", "g", "--root", p+"/gr")
	complete([]string{p + "/other"}, paths, "lock", p+"/app/a", "--limit", "2", "--limit-from", p+"/ot")
	complete([]string{"always", "on-failure", "never"}, none, "rebalance", "g", "--restart", "")
	// With no server to ask, nothing, quickly.
	complete(nil, paths, "--zk", "127.0.0.1:1", "ls", "/")
}

// Flags may stand between the arguments, the common flags may come before
// the command, and an argument that starts with "-", like a negative
// number, comes after "--".
func TestFlagsBetweenArguments(t *testing.T) {
	t.Parallel()
	path := unique(t)
	if out := mustZkc(t, "counter", "add", path, "--seed", "-3", "--", "-5"); out != "-8\n" {
		t.Fatalf("counter add with --seed -3 between the arguments: %q", out)
	}
	if out := mustZkc(t, "counter", "--log-level", "warn", "add", path, "--seed=1", "--", "-5"); out != "-13\n" {
		t.Fatalf("counter add -- -5: %q", out)
	}
	if out := mustZkc(t, "--session-timeout", "5s", "counter", "set", path, "--", "-1"); out != "-1\n" {
		t.Fatalf("counter set -- -1: %q", out)
	}
	qpath := unique(t)
	mustZkc(t, "queue", "put", "--priority", "2", qpath, "b", "c")
	mustZkc(t, "queue", "put", qpath, "--priority", "1", "a")
	if out := mustZkc(t, "queue", "take", qpath, "-n", "3", "--no-wait"); out != "a\nb\nc\n" {
		t.Fatalf("queue take -n 3: %q", out)
	}
	// A negative number before "--", and a long flag written with one
	// dash, forms zkcoord once read otherwise, fail with a usage error that
	// says what to write, and change nothing.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"counter", "add", path, "-5"}, `-5 is read as a flag: arguments that start with "-" go after "--"`},
		{[]string{"counter", "add", "-7", path}, `-7 is read as a flag`},
		{[]string{"counter", "get", path, "-seed", "7"}, "unknown flag -seed: a long flag takes two dashes (--seed)"},
		{[]string{"-zk", "h:1", "counter", "get", path}, "unknown flag -zk: a long flag takes two dashes (--zk)"},
		{[]string{"counter", "get", path, "-help"}, "(--help)"},
	} {
		r := zkc(t, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("zkcoord %s: want exit 2 and %q, got %s", strings.Join(c.args, " "), c.want, r)
		}
	}
	if out := mustZkc(t, "counter", "get", path); out != "-1\n" {
		t.Fatalf("counter get after the usage errors: %q", out)
	}
}

// A negative number is an argument of any command that takes one, like a
// queue item, after "--".
func TestNegativeItems(t *testing.T) {
	t.Parallel()
	q := unique(t)
	mustZkc(t, "queue", "put", q, "--priority", "3", "--", "-5", "-7")
	if out := mustZkc(t, "queue", "take", "-n", "2", q); out != "-5\n-7\n" {
		t.Fatalf("queue take: %q", out)
	}
}
