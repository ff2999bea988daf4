package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// StartPython runs a Kazoo peer script with args. The script may import
// kazoo_peer (the shared line protocol: say, serve). The process is killed
// when the test ends.
func StartPython(t testing.TB, script string, args ...string) *Proc {
	t.Helper()
	requireTools(t, python())
	if out, err := exec.Command(python(), "-c", "import kazoo").CombinedOutput(); err != nil {
		missing(t, "python3 module kazoo (Debian package python3-kazoo): "+string(out))
	}
	dir, err := peerDir()
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	path := dir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		path += string(os.PathListSeparator) + old
	}
	env := []string{"PYTHONPATH=" + path}
	return start(t, "python "+filepath.Base(script), env, python(), append([]string{"-u", script}, args...)...)
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
