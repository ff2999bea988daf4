//go:build unix

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// counter and queue print JSON with --json: counter an object per command,
// queue take an object per item on a line of its own (both layouts),
// queue len an object.
func TestCounterAndQueueJSON(t *testing.T) {
	t.Parallel()
	p := unique(t)
	var c countJSON
	for _, step := range []struct {
		args  []string
		value int32
	}{
		{[]string{"counter", "set", "--json", p + "/c", "5"}, 5},
		{[]string{"counter", "add", "--json", p + "/c", "--", "-2"}, 3},
		{[]string{"counter", "get", "--json", p + "/c"}, 3},
	} {
		if err := json.Unmarshal([]byte(mustZkc(t, step.args...)), &c); err != nil ||
			c.Path != p+"/c" || c.Value != step.value || c.Version < 1 {
			t.Errorf("%s --json: %+v, %v", strings.Join(step.args[:2], " "), c, err)
		}
	}
	for _, layout := range [][]string{nil, {"--work"}} {
		q := p + "/q" + strings.Join(layout, "")
		mustZkc(t, append([]string{"queue", "put", q, "one", "two\xff"}, layout...)...)
		var n struct {
			Path string `json:"path"`
			Len  int    `json:"len"`
		}
		if err := json.Unmarshal([]byte(mustZkc(t, append([]string{"queue", "len", q, "--json"}, layout...)...)), &n); err != nil || n.Path != q || n.Len != 2 {
			t.Errorf("queue len --json %v: %+v, %v", layout, n, err)
		}
		out := mustZkc(t, append([]string{"queue", "take", q, "-n", "2", "--no-wait", "--json"}, layout...)...)
		want := `{"data":"one","encoding":"utf-8"}` + "\n" + `{"data":"dHdv/w==","encoding":"base64"}` + "\n"
		if out != want {
			t.Errorf("queue take --json %v: %q, want %q", layout, out, want)
		}
	}
}
