package zkcoord_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of docs/architecture.md: what each library package may import
// from this module. A package missing from the table is a tool and may
// import anything; a library package importing outside its row fails.
var allowedImports = func() map[string][]string {
	foundations := []string{"internal/fifo", "internal/seq", "internal/gate", "internal/delay", "internal/fanout", "internal/lifetime", "internal/end"}
	core := append([]string{""}, foundations...)
	recipe := append(slices.Clone(core), "internal/recipe")
	return map[string][]string{
		"internal/fifo":     nil,
		"internal/seq":      nil,
		"internal/gate":     nil,
		"internal/delay":    nil,
		"internal/fanout":   nil,
		"internal/lifetime": nil,
		"internal/end":      nil,
		"internal/wire":     nil,
		"internal/zkconn":   {"internal/wire", "internal/fifo"},
		"internal/recipe":   core,
		// The lock-delay shared by lock and the election engine.
		"internal/lockdelay": core,
		"internal/elect":     append(slices.Clone(recipe), "internal/lockdelay"),
		"rebalance/alloc":    nil,
		// The Session is the one user of the wire.
		"":                append(slices.Clone(foundations), "internal/wire", "internal/zkconn"),
		"election":        append(slices.Clone(recipe), "internal/elect", "internal/lockdelay"),
		"failover":        append(slices.Clone(recipe), "election", "internal/elect"),
		"rebalance":       append(slices.Clone(recipe), "election", "internal/elect", "rebalance/alloc"),
		"lock":            append(slices.Clone(recipe), "internal/lockdelay"),
		"barrier":         recipe,
		"queue":           recipe,
		"counter":         recipe,
		"config":          recipe,
		"group":           recipe,
		"twophase":        recipe,
		"lease":           recipe,
		"node":            recipe,
		"cache":           recipe,
		"discovery":       append(slices.Clone(recipe), "cache"),
		"metrics":         {""},
		"metrics/prom":    {"", "metrics"},
		"kerberos":        {""},
		"zktest":          {"zktest/zkserver"},
		"zktest/zkserver": nil,
	}
}()

// modules are the package patterns of the workspace's modules (go.work)
// that ship: the library with zktest, the tools, the Prometheus adapter
// and the Kerberos mechanism.
var modules = []string{"./...", "./cmd/...", "./metrics/prom/...", "./kerberos/..."}

func TestArchitecture(t *testing.T) {
	const module = "github.com/zkcoord/zkcoord"
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, modules...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, _ := rel(fields[0])
		allowed, library := allowedImports[pkg]
		if !library {
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			r, ours := rel(imp)
			if ours && !slices.Contains(allowed, r) {
				t.Errorf("%s imports %s; docs/architecture.md does not allow it", fields[0], imp)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("only %d library packages found by go list", seen)
	}
}

// The library and the command speak ZooKeeper only through zkcoord's own
// client: no go-zookeeper among their dependencies (bench/ measures it).
func TestNoForeignZooKeeperClient(t *testing.T) {
	out, err := exec.Command("go", append([]string{"list", "-deps"}, modules...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "go-zookeeper") {
			t.Errorf("%s is among the dependencies of the module's packages", p)
		}
	}
}
