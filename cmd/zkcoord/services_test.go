//go:build unix

package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/discovery"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// services register keeps an instance registered until interrupted; ls and
// get see it, and it is gone after.
func TestServices(t *testing.T) {
	t.Parallel()
	base := unique(t)
	reg := start(t, nil, "services", "register", base, "billing", "--address", "10.0.0.5", "--port", "8080",
		"--id", "one", "--payload", `{"zone":"a"}`)
	testkit.Eventually(t, 30*time.Second, "the registration", func() bool { return len(reg.stdout()) > 0 })
	if got := reg.stdout()[0]; got != "registered "+base+"/billing/one id one" {
		t.Fatalf("register printed %q", got)
	}
	if out := mustZkc(t, "services", "ls", base); out != "billing\n" {
		t.Errorf("services ls: %q", out)
	}
	var ins []discovery.Instance
	if err := json.Unmarshal([]byte(mustZkc(t, "services", "get", base, "billing", "--json")), &ins); err != nil {
		t.Fatal(err)
	}
	if len(ins) != 1 || ins[0].ID != "one" || ins[0].Address != "10.0.0.5" || ins[0].Port != 8080 ||
		!strings.Contains(string(ins[0].Payload), `"zone"`) {
		t.Fatalf("services get: %+v, payload %s", ins, ins[0].Payload)
	}
	if out := mustZkc(t, "services", "get", base, "billing"); !strings.Contains(out, "one  ") || !strings.Contains(out, "8080") {
		t.Errorf("services get: %s", out)
	}
	// Nodes that are not instances are skipped, and reported.
	mustZkc(t, "create", base+"/billing/junk", "not json")
	r := zkc(t, "services", "get", base, "billing", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &ins); r.code != 0 || err != nil || len(ins) != 1 ||
		!strings.Contains(r.stderr, "zkcoord: services get: skipped a node: "+base+"/billing/junk is not a service instance") {
		t.Errorf("services get beside a node that is not an instance: %s", r)
	}
	mustZkc(t, "rm", base+"/billing/junk")
	if err := reg.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if code := reg.exitCode(t, 10*time.Second); code != 0 {
		t.Fatalf("interrupted register: exit %d\n%s", code, reg.Stderr())
	}
	if out := mustZkc(t, "services", "get", base, "billing", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("still registered after the end: %s", out)
	}
	if r := zkc(t, "services", "register", base, "billing", "--port", "1"); r.code != exitUsage {
		t.Errorf("register without --address: %s", r)
	}
	// The default base.
	if r := zkc(t, "services", "ls"); r.code != 0 || slices.Contains(strings.Fields(r.stdout), "billing-"+t.Name()) {
		t.Errorf("services ls without a base: %s", r)
	}
}
