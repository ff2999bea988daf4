package interop

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// StartPython runs a Kazoo peer script with args. The process is killed
// when the test ends.
func StartPython(t testing.TB, script string, args ...string) *Proc {
	t.Helper()
	requireTools(t, "python3")
	if out, err := exec.Command("python3", "-c", "import kazoo").CombinedOutput(); err != nil {
		missing(t, "python3 module kazoo (Debian package python3-kazoo): "+string(out))
	}
	return start(t, "python "+filepath.Base(script), "python3", append([]string{"-u", script}, args...)...)
}
