package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// StartPython runs a Kazoo peer script with args. The process is killed
// when the test ends.
func StartPython(t testing.TB, script string, args ...string) *Proc {
	t.Helper()
	requireTools(t, python())
	if out, err := exec.Command(python(), "-c", "import kazoo").CombinedOutput(); err != nil {
		missing(t, "python3 module kazoo (Debian package python3-kazoo): "+string(out))
	}
	return start(t, "python "+filepath.Base(script), python(), append([]string{"-u", script}, args...)...)
}

// python returns the interpreter that has Debian's python3-kazoo: the
// system one, which a python3 earlier on PATH (pyenv, a venv) may shadow.
func python() string {
	if _, err := os.Stat(systemPython); err == nil {
		return systemPython
	}
	return "python3"
}

const systemPython = "/usr/bin/python3"
