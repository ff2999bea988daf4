// Package marked finds the processes that carry a mark in their
// environment (KEY=VALUE, inherited by every process they start), so that
// a program or a test can check that none of the processes it started is
// left running, and kill those that are. It reads /proc: elsewhere than on
// Linux it finds none.
package marked

import (
	"fmt"
	"os"
	"strings"
)

// Find returns the running processes, this one aside, whose environment
// holds mark.
func Find(mark string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	self := os.Getpid()
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == mark {
				// A zombie waiting to be reaped is not running.
				if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
					break
				}
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// Kill kills (SIGKILL) the processes Find returns, and returns them.
func Kill(mark string) []int {
	pids := Find(mark)
	for _, pid := range pids {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
	return pids
}
