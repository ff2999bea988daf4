package zkserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WithFsync turns the servers' log sync on; without it they skip it.
func TestWithFsync(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{nil, "forceSync=no"},
		{[]Option{WithFsync()}, "forceSync=yes"},
	} {
		c := launch(t, tc.opts...)
		b, err := os.ReadFile(filepath.Join(c.Server(0).Dir(), "zoo.cfg"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "\n"+tc.want+"\n") {
			t.Errorf("zoo.cfg lacks %q:\n%s", tc.want, b)
		}
	}
}
