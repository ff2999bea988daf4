//go:build unix

package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// Without a command, lock and elect with --json print what they took as
// one line of JSON, with the token a fenced write would carry.
func TestHoldJSON(t *testing.T) {
	t.Parallel()
	path := unique(t)
	holder := start(t, nil, "lock", path, "--json")
	var held struct {
		Path  string `json:"path"`
		Node  string `json:"node"`
		Token int64  `json:"token"`
	}
	testkit.Eventually(t, 30*time.Second, "the lock's JSON line", func() bool {
		out := holder.stdout()
		return len(out) > 0 && json.Unmarshal([]byte(out[0]), &held) == nil
	})
	if held.Path != path || !strings.HasPrefix(held.Node, path+"/") || held.Token <= 0 {
		t.Errorf("lock --json: %+v", held)
	}
	if err := holder.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	epath := unique(t)
	leader := start(t, nil, "elect", epath, "--id", "one", "--json")
	var led struct {
		Path  string `json:"path"`
		ID    string `json:"id"`
		Term  int64  `json:"term"`
		Token int64  `json:"token"`
	}
	testkit.Eventually(t, 30*time.Second, "the leadership's JSON line", func() bool {
		out := leader.stdout()
		return len(out) > 0 && json.Unmarshal([]byte(out[0]), &led) == nil
	})
	if led.Path != epath || led.ID != "one" || led.Term < 1 || led.Token <= 0 {
		t.Errorf("elect --json: %+v", led)
	}
	if err := leader.Proc.Terminate(10 * time.Second); err != nil {
		t.Fatal(err)
	}
}
