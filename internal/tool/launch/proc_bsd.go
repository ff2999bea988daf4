//go:build unix && !linux

package launch

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr: these systems have no parent-death signal; a child is
// cleaned up by [Group.Close] and by the context given to [Start].
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// Paused reports whether the process is currently stopped by a signal,
// according to ps(1).
func (p *Proc) Paused() bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(p.Pid())).Output()
	if err != nil || p.Exited() {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(string(out)), "T")
}
