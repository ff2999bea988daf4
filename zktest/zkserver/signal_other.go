//go:build !unix

package zkserver

import (
	"errors"
	"fmt"
	"os"
)

// terminate kills a server: without SIGTERM there is no graceful shutdown
// to ask for.
func terminate(p *os.Process) error { return p.Kill() }

// kill ends a server at once.
func kill(p *os.Process) error { return p.Kill() }

// suspend fails: there is no SIGSTOP to pause a process with.
func suspend(*os.Process, bool) error {
	return fmt.Errorf("pausing a process: %w", errors.ErrUnsupported)
}
