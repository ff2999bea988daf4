package launch

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// sysProcAttr has the kernel kill a child when the thread that started it
// (see spawn) ends, so that none outlives the test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// Paused reports whether the process is currently stopped by a signal,
// according to /proc.
func (p *Proc) Paused() bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
	if err != nil || p.Exited() {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] == 'T'
}
