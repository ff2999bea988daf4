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

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
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
	a := &app{App: cli.NewApp(nil, io.Discard, io.Discard)}
	cc, pos := parseLine(t, a, "counter", "add", "/c", "--zk", "h:1", "--seed", "-3", "--", "-5")
	seed, _ := cc.Flags().GetInt("seed")
	if !slices.Equal(pos, []string{"/c", "-5"}) || seed != -3 || a.Conn.Servers != "h:1" {
		t.Fatalf("pos %q seed %d servers %q", pos, seed, a.Conn.Servers)
	}
	a = &app{App: cli.NewApp(nil, io.Discard, io.Discard)}
	cc, pos = parseLine(t, a, "--zk", "h:2", "lock", "--try", "/l", "--wait=5s", "--", "cmd", "--zk", "-5")
	if cc.Name() != "lock" || !slices.Equal(pos, []string{"/l", "cmd", "--zk", "-5"}) || cc.ArgsLenAtDash() != 1 ||
		a.Conn.Servers != "h:2" || !cc.Flags().Changed("wait") || !cc.Flags().Changed("try") {
		t.Fatalf("%s: pos %q at dash %d servers %q", cc.Name(), pos, cc.ArgsLenAtDash(), a.Conn.Servers)
	}
	a = &app{App: cli.NewApp(nil, io.Discard, io.Discard)}
	cc, pos = parseLine(t, a, "queue", "take", "/q", "-n", "3")
	if n, _ := cc.Flags().GetInt("n"); n != 3 || !slices.Equal(pos, []string{"/q"}) {
		t.Fatalf("queue take: n %d pos %q", n, pos)
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
