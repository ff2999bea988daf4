//go:build unix

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/rebalance"
)

func TestParseTemplate(t *testing.T) {
	cases := []struct {
		text string
		res  string
		want []string
	}{
		{"sleep 3600", "r1", []string{"sleep", "3600"}},
		{"consume --queue {resource}", "a b", []string{"consume", "--queue", "a b"}},
		{"run --name=x-{resource}", "r1", []string{"/bin/sh", "-c", `run --name=x-"$ZKCOORD_RESOURCE"`}},
		{`echo "{resource}" > /tmp/{resource}`, "r1", []string{"/bin/sh", "-c", `echo "$ZKCOORD_RESOURCE" > /tmp/"$ZKCOORD_RESOURCE"`}},
		{`echo \{resource} | wc`, "r1", []string{"/bin/sh", "-c", `echo \{resource} | wc`}},
	}
	for _, c := range cases {
		tmpl, err := parseTemplate(c.text, "resource")
		if err != nil {
			t.Fatal(err)
		}
		if got := tmpl.argv(map[string]string{"resource": c.res}); !slices.Equal(got, c.want) {
			t.Errorf("%q with %q: got %q, want %q", c.text, c.res, got, c.want)
		}
	}
	if _, err := parseTemplate("echo '{resource}' | wc", "resource"); err == nil {
		t.Error("a placeholder inside single quotes was accepted")
	}
	if _, err := parseTemplate("  "); err == nil {
		t.Error("an empty command was accepted")
	}
	if got := expandArgs([]string{"x", "--r={resource}"}, map[string]string{"resource": "a;b"}); !slices.Equal(got, []string{"x", "--r=a;b"}) {
		t.Errorf("expandArgs: %q", got)
	}
}

// parseLine parses a command line as run does, without running it: it
// returns the command found and its positional arguments.
func parseLine(t *testing.T, a *app, args ...string) (*cobra.Command, []string) {
	t.Helper()
	root := newRootCommand(a)
	cc, rest, err := root.Find(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := cc.ParseFlags(rest); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return cc, cc.Flags().Args()
}

// Flags may come before, between and after arguments, a flag's value may
// start with a dash, and what follows "--" is arguments, taken as they are.
func TestFlagParsing(t *testing.T) {
	a := &app{stdout: io.Discard, stderr: io.Discard}
	cc, pos := parseLine(t, a, "counter", "add", "/c", "--zk", "h:1", "--seed", "-3", "--", "-5")
	seed, _ := cc.Flags().GetInt("seed")
	if !slices.Equal(pos, []string{"/c", "-5"}) || seed != -3 || a.conn.servers != "h:1" {
		t.Fatalf("pos %q seed %d servers %q", pos, seed, a.conn.servers)
	}
	a = &app{stdout: io.Discard, stderr: io.Discard}
	cc, pos = parseLine(t, a, "--zk", "h:2", "lock", "--try", "/l", "--wait=5s", "--", "cmd", "--zk", "-5")
	if cc.Name() != "lock" || !slices.Equal(pos, []string{"/l", "cmd", "--zk", "-5"}) || cc.ArgsLenAtDash() != 1 ||
		a.conn.servers != "h:2" || !cc.Flags().Changed("wait") || !cc.Flags().Changed("try") {
		t.Fatalf("%s: pos %q at dash %d servers %q", cc.Name(), pos, cc.ArgsLenAtDash(), a.conn.servers)
	}
	a = &app{stdout: io.Discard, stderr: io.Discard}
	cc, pos = parseLine(t, a, "queue", "take", "/q", "-n", "3")
	if n, _ := cc.Flags().GetInt("n"); n != 3 || !slices.Equal(pos, []string{"/q"}) {
		t.Fatalf("queue take: n %d pos %q", n, pos)
	}
}

func TestEpisodes(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	member := func(id, name string) rebalance.MemberInfo { return rebalance.MemberInfo{ID: id, Name: name} }
	settled := &rebalance.Description{Generation: 1, Resources: []string{"r1", "r2"},
		Members:  []rebalance.MemberInfo{member("c1", "w1")},
		Barriers: []rebalance.BarrierHolder{{Resource: "r1", Client: "c1"}, {Resource: "r2", Client: "c1"}}}
	moving := &rebalance.Description{Generation: 2, Rebalancing: true, Resources: settled.Resources,
		Members:  []rebalance.MemberInfo{member("c1", "w1"), member("c2", "w2")},
		Barriers: []rebalance.BarrierHolder{{Resource: "r1", Client: "c1"}}}
	after := &rebalance.Description{Generation: 2, Resources: settled.Resources, Coordinator: "c1",
		Members:  moving.Members,
		Barriers: []rebalance.BarrierHolder{{Resource: "r1", Client: "c1"}, {Resource: "r2", Client: "c2"}}}

	var eps episodes
	if e := eps.observe(snapshot{At: at(0), D: settled}); e == nil || e.N != 1 || e.Moved != 2 {
		t.Fatalf("first settled state: %+v", e)
	}
	if e := eps.observe(snapshot{At: at(100), D: settled}); e != nil {
		t.Fatalf("no change, yet %+v", e)
	}
	if e := eps.observe(snapshot{At: at(300), Since: at(200), D: moving}); e != nil {
		t.Fatalf("ended while moving: %+v", e)
	}
	e := eps.observe(snapshot{At: at(700), Since: at(650), D: after})
	if e == nil || e.N != 2 || e.Duration() != 500*time.Millisecond || e.Moved != 1 || e.Trigger != "joined w2" || e.Coord != "w1" {
		t.Fatalf("rebalancing: %+v", e)
	}
	// A whole rebalancing between two snapshots counts from the change.
	back := &rebalance.Description{Generation: 3, Resources: settled.Resources, Members: settled.Members,
		Barriers: settled.Barriers}
	e = eps.observe(snapshot{At: at(1000), Since: at(900), D: back})
	if e == nil || e.N != 3 || e.Duration() != 100*time.Millisecond || e.Trigger != "left w2" {
		t.Fatalf("quick rebalancing: %+v", e)
	}

	// Joining a settled group mid-life sees no rebalancing until the
	// group changes.
	late := episodes{joined: true}
	if e := late.observe(snapshot{At: at(0), D: settled}); e != nil {
		t.Fatalf("a settled group found on joining counted as %+v", e)
	}
	late.observe(snapshot{At: at(300), Since: at(200), D: moving})
	if e := late.observe(snapshot{At: at(700), D: after}); e == nil || e.N != 1 || e.Duration() != 500*time.Millisecond {
		t.Fatalf("the first rebalancing seen after joining: %+v", e)
	}
}

// TestShellTemplateHostileValues runs shell templates with resource names
// that are shell syntax: each must reach the command as one literal word,
// never as code.
func TestShellTemplateHostileValues(t *testing.T) {
	dir := t.TempDir()
	hostile := []string{"$(touch " + dir + "/pwned)", "`touch " + dir + "/pwned`", "a b", "it's", `x"; touch ` + dir + `/pwned; "`, "*"}
	for _, text := range []string{`printf '%s\n' {resource} | cat`, `printf '%s\n' "{resource}" | cat`, `printf '%s\n' "r={resource}" | cat`} {
		tmpl, err := parseTemplate(text, "resource")
		if err != nil {
			t.Fatal(err)
		}
		if !tmpl.shell {
			t.Fatalf("%q: not run by a shell", text)
		}
		for _, v := range hostile {
			argv := tmpl.argv(map[string]string{"resource": v})
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), placeholderVar("resource")+"="+v)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%q with %q: %v", text, v, err)
			}
			want := v
			if strings.Contains(text, "r={resource}") {
				want = "r=" + v
			}
			if got := strings.TrimSuffix(string(out), "\n"); got != want {
				t.Errorf("%q with %q: printed %q, want %q", text, v, got, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a resource name ran as shell code")
	}
}
