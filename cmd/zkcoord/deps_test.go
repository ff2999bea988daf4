package main

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// forbiddenDeps are packages made for tests, and what they pull in. The
// zkcoord binary must link none of them. The demo (zkcoord-demo) starts
// ZooKeeper through zktest/zkserver, which needs only the standard library. An entry ending in
// "/" forbids everything under it as well.
var forbiddenDeps = []string{
	"testing",
	"go.uber.org/goleak/",
	"github.com/Shopify/toxiproxy/",
	"github.com/rs/zerolog/",
	"github.com/gorilla/mux/",
	"github.com/zkcoord/zkcoord/zktest",
	"github.com/zkcoord/zkcoord/internal/tool/testkit/",
	"github.com/zkcoord/zkcoord/cmd/internal/browsertest",
	"github.com/chromedp/",
	"github.com/zkcoord/zkcoord/internal/tool/interop/",
	// The demo's checker: only zkcoord-demo (cmd/zkcoord-demo) links it.
	// Its event-line format (internal/tool/event) is apart from it.
	"github.com/zkcoord/zkcoord/internal/tool/oracle/",
}

// The zkcoord binary stays lean on every platform it is built for: go list
// -deps shows none of the test packages.
func TestBinaryLinksNoTestPackages(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{runtime.GOOS, "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-e", "-deps", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=amd64")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps: %v\n%s", goos, err, stderrOf(err))
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("GOOS=%s go list -deps listed only %q", goos, deps)
		}
		for _, dep := range deps {
			for _, bad := range forbiddenDeps {
				if dep == strings.TrimSuffix(bad, "/") || strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad) {
					t.Errorf("GOOS=%s: the zkcoord binary links %s", goos, dep)
				}
			}
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
