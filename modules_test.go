package zkcoord_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A user's module gets only what the packages it imports need: a service
// that imports a recipe gets the wire's dependencies, a test that imports
// zktest what starting servers and proxies needs, and neither gets the
// tools' dependencies (cobra, chromedp, Prometheus), the Kerberos
// module's (gokrb5) or go-zookeeper, not even in its module graph. Each
// case builds a throwaway module against this checkout and reads the
// go.mod that go mod tidy writes and go list -m all.
func TestUserModules(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		want  []string // every module its go.mod may require
	}{
		{"recipe user", map[string]string{"main.go": `package main

import (
	"context"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/lock"
)

func main() {
	s, err := zkcoord.Connect(context.Background(), zkcoord.Config{Servers: []string{"127.0.0.1:2181"}})
	if err != nil {
		return
	}
	_, _ = lock.NewMutex(s, "/l")
}
`}, []string{"github.com/zkcoord/zkcoord", "github.com/google/uuid"}},
		{"zktest user", map[string]string{"main.go": "package main\n\nfunc main() {}\n", "main_test.go": `package main

import (
	"testing"

	"github.com/zkcoord/zkcoord/zktest"
)

func TestServer(t *testing.T) { _ = zktest.Start }
`}, []string{"github.com/zkcoord/zkcoord", "go.uber.org/goleak"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			gomod := "module example.com/user\n\ngo 1.24\n\nrequire github.com/zkcoord/zkcoord v0.0.0\n\nreplace github.com/zkcoord/zkcoord => " + root + "\n"
			files := map[string]string{"go.mod": gomod}
			for k, v := range c.files {
				files[k] = v
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tidy := exec.Command("go", "mod", "tidy")
			tidy.Dir = dir
			tidy.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
			if out, err := tidy.CombinedOutput(); err != nil {
				t.Fatalf("go mod tidy: %v\n%s", err, out)
			}
			b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range required(string(b)) {
				if !slices.Contains(c.want, m) {
					t.Errorf("the module requires %s; want only %v\n%s", m, c.want, b)
				}
			}
			// The module graph, which dependency scanners read (go list
			// -m all), holds none of the tools' modules.
			list := exec.Command("go", "list", "-m", "all")
			list.Dir = dir
			list.Env = tidy.Env
			graph, err := list.Output()
			if err != nil {
				t.Fatalf("go list -m all: %v", err)
			}
			for _, tool := range []string{"spf13/cobra", "spf13/pflag", "chromedp", "prometheus", "golang.org/x/term", "go-zookeeper", "gokrb5"} {
				if strings.Contains(string(graph), tool) {
					t.Errorf("the module graph holds %s, a dependency of the tools only:\n%s", tool, graph)
				}
			}
		})
	}
}

// required lists the module paths a go.mod requires.
func required(gomod string) []string {
	var out []string
	block := false
	for _, line := range strings.Split(gomod, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			block = true
		case block && line == ")":
			block = false
		case block && line != "":
			out = append(out, strings.Fields(line)[0])
		case strings.HasPrefix(line, "require "):
			out = append(out, strings.Fields(line)[1])
		}
	}
	return out
}
