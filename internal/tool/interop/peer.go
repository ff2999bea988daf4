package interop

import (
	"embed"
	"os"
	"path/filepath"
	"sync"
)

// The code every peer shares, in each language: its connection (Java) and
// the line protocol (read a command, answer it, "error <message>" for an
// unknown or failed one). It is written out once per test binary, for
// javac and for Python's import path.
//
//go:embed peer
var peerFiles embed.FS

// peerDir writes the shared peer code to a directory once and returns it.
var peerDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "zkcoord-peer-")
	if err != nil {
		return "", err
	}
	entries, err := peerFiles.ReadDir("peer")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := peerFiles.ReadFile("peer/" + e.Name())
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
})
