//go:build unix

package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// Each command's common failure (a missing node, group or service, an
// empty queue, an unreachable server, a command that does not exist) is
// one line with one "zkcoord: " prefix, exit 1: no package prefix
// repeated, no bare "context canceled" or "<nil>", and it names what it is
// about.
func TestFailureMessages(t *testing.T) {
	t.Parallel()
	p := unique(t)
	mustZkc(t, "create", "--parents", p+"/empty")
	mustZkc(t, "counter", "set", p+"/full", "1")
	holder := start(t, nil, "lock", p+"/held")
	testkit.Eventually(t, 30*time.Second, "the lock to be held", func() bool { return len(holder.stdout()) > 0 })
	cases := []struct {
		args []string
		want string // in the message
	}{
		{[]string{"lock", p + "/l", "--", "/no/such/program"}, "/no/such/program"},
		{[]string{"elect", p + "/e", "--", "/no/such/program"}, "/no/such/program"},
		{[]string{"leader", p + "/missing"}, p + "/missing"},
		{[]string{"resources", "rm", "no-group", "r1", "--root", p}, "no-group"},
		{[]string{"status", "no-group", "--root", p}, "no-group"},
		{[]string{"queue", "take", p + "/q", "--no-wait"}, p + "/q"},
		{[]string{"queue", "take", p + "/q", "--timeout", "100ms"}, p + "/q"},
		{[]string{"counter", "get", p + "/missing"}, p + "/missing"},
		{[]string{"lock", "break", p + "/missing", "--yes"}, p + "/missing"},
		{[]string{"lock", "revoke", p + "/missing"}, p + "/missing"},
		{[]string{"election", "revoke", p + "/missing"}, p + "/missing"},
		{[]string{"ls", p + "/missing"}, p + "/missing"},
		{[]string{"get", p + "/missing"}, p + "/missing"},
		{[]string{"stat", p + "/missing"}, p + "/missing"},
		{[]string{"set", p + "/missing", "x"}, p + "/missing"},
		{[]string{"create", p + "/missing/child"}, p + "/missing"},
		{[]string{"create", p + "/empty"}, p + "/empty"},
		{[]string{"rm", p + "/missing"}, p + "/missing"},
		{[]string{"acl", "get", p + "/missing"}, p + "/missing"},
		{[]string{"acl", "set", p + "/missing", "world:anyone:r"}, p + "/missing"},
		{[]string{"ephemerals", p + "/missing"}, p + "/missing"},
		{[]string{"set", p + "/empty", "x", "--version", "7"}, p + "/empty"},
		{[]string{"rm", p}, p},
		{[]string{"counter", "add", p + "/full", "--", "2147483647"}, p + "/full"},
		{[]string{"barrier", "enter", p + "/db", "--members", "2", "--timeout", "100ms"}, p + "/db"},
		{[]string{"lock", p + "/held", "--try", "--", "true"}, p + "/held"},
		{[]string{"lock", p + "/held", "--wait", "100ms", "--", "true"}, p + "/held"},
		{[]string{"lock", p + "/held", "--read", "--", "true"}, p + "/held"},
		{[]string{"server", "stat", "127.0.0.1:1"}, "127.0.0.1:1"},
		{[]string{"--zk", "127.0.0.1:1", "--connect-timeout", "1s", "get", "/x"}, "127.0.0.1:1"},
		{[]string{"--chroot", p + "/nochroot", "get", "/x"}, p + "/nochroot"},
	}
	prefix := regexp.MustCompile(`(^|: )(zkcoord|lock|election|rebalance|queue|counter|barrier|discovery|group|config|console|node|cache): `)
	for _, c := range cases {
		r := zkc(t, c.args...)
		// The message is the last line; logs (warnings) may come before.
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		msg := lines[len(lines)-1]
		for _, l := range lines[:len(lines)-1] {
			if !strings.HasPrefix(l, "time=") {
				t.Errorf("zkcoord %s: a line before the message that is not a log: %q", strings.Join(c.args, " "), l)
			}
		}
		switch {
		case r.code != exitFailure:
			t.Errorf("zkcoord %s: want exit 1, got %s", strings.Join(c.args, " "), r)
		case !strings.HasPrefix(msg, "zkcoord: "):
			t.Errorf("zkcoord %s: want a message starting \"zkcoord: \", got %q", strings.Join(c.args, " "), msg)
		case len(prefix.FindAllString(msg, -1)) != 1:
			t.Errorf("zkcoord %s: more than one package prefix in %q", strings.Join(c.args, " "), msg)
		case strings.Contains(msg, "context canceled") || strings.Contains(msg, "context deadline exceeded") ||
			strings.Contains(msg, "<nil>") || strings.Contains(msg, "%!"):
			t.Errorf("zkcoord %s: a bare internal error in %q", strings.Join(c.args, " "), msg)
		case !strings.Contains(msg, c.want):
			t.Errorf("zkcoord %s: %q does not name %q", strings.Join(c.args, " "), msg, c.want)
		}
	}
}
