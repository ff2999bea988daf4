//go:build unix

package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// consoleAt waits for a process to print the console's URL and returns it.
func consoleAt(t *testing.T, p *bg) string {
	t.Helper()
	var url string
	testkit.Eventually(t, 60*time.Second, "the console's URL", func() bool {
		for _, l := range p.stdout() {
			if u, ok := strings.CutPrefix(l, "console at "); ok {
				url = u
				return true
			}
		}
		return false
	})
	return url
}

// get fetches url and returns the status and the body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// zkcoord ui serves the page and the state of the recipes under its root,
// and stops cleanly when interrupted.
func TestUI(t *testing.T) {
	t.Parallel()
	root := unique(t)
	holder := start(t, nil, "lock", root+"/report")
	testkit.Eventually(t, 30*time.Second, "the lock", func() bool { return len(holder.stdout()) > 0 })
	ui := start(t, nil, "ui", "--listen", "127.0.0.1:0", "--root", root)
	url := consoleAt(t, ui)
	if code, body := get(t, url); code != http.StatusOK || !strings.Contains(body, "<html") {
		t.Fatalf("GET /: %d\n%.300s", code, body)
	}
	testkit.Eventually(t, 30*time.Second, "the lock in /api/state", func() bool {
		code, body := get(t, url+"api/state")
		return code == http.StatusOK && strings.Contains(body, root+"/report")
	})
	if ui.Stderr() != "" && strings.Contains(ui.Stderr(), "warning") {
		t.Errorf("a warning for a loopback address: %s", ui.Stderr())
	}
	if err := ui.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if code := ui.exitCode(t, 10*time.Second); code != 0 {
		t.Fatalf("interrupted ui: exit %d\n%s", code, ui.Stderr())
	}
	if r := zkc(t, "ui", "--path", "bogus:/x", "--listen", "127.0.0.1:0"); r.code != exitUsage {
		t.Errorf("an unknown kind: %s", r)
	}
}

// zkcoord ui --admin prints a URL with a key made for the run, and answers
// only requests addressed to an IP address, localhost or a --host name.
func TestUIAdminKeyAndHosts(t *testing.T) {
	t.Parallel()
	ui := start(t, nil, "ui", "--listen", "127.0.0.1:0", "--root", unique(t), "--admin", "--host", "console.test")
	url := consoleAt(t, ui)
	base, key, ok := strings.Cut(url, "#key=")
	if !ok || len(key) != 32 {
		t.Fatalf("the admin URL %q carries no key", url)
	}
	for host, want := range map[string]int{"": http.StatusOK, "console.test:80": http.StatusOK,
		"localhost": http.StatusOK, "evil.example": http.StatusForbidden} {
		req, _ := http.NewRequest(http.MethodGet, base+"api/state", nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /api/state as host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
	if err := ui.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
}
