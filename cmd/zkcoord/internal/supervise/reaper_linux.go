package supervise

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// adoptOrphans makes the calling process (the shim) a child subreaper: the
// orphans of the command's tree become its children instead of init's,
// whatever process group or session they moved to, so that every process
// the command started stays below the shim until the shim has killed and
// reaped it.
func adoptOrphans() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// A proc is a process, told apart from a later one that reuses its pid by
// the time it started.
type proc struct {
	pid   int
	start uint64 // in clock ticks since boot, from /proc/PID/stat
}

// descendants returns every live process below the calling process, zombies
// left out, from a scan of /proc. A child subreaper's descendants are
// exactly the processes in that tree, wherever they moved.
func descendants() []proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	children := map[int][]proc{}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if ok && !st.dead {
			children[st.ppid] = append(children[st.ppid], proc{pid: pid, start: st.start})
		}
	}
	var out []proc
	for todo := []int{os.Getpid()}; len(todo) > 0; todo = todo[1:] {
		for _, c := range children[todo[0]] {
			out = append(out, c)
			todo = append(todo, c.pid)
		}
	}
	return out
}

// stat is what descendants reads of /proc/PID/stat.
type stat struct {
	ppid  int
	start uint64
	dead  bool // a zombie, or being reaped
}

func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, false
	}
	// The command name, in parentheses, may hold anything: the fields
	// start after the last ')'. Then: state ppid pgrp session tty_nr
	// tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
	// priority nice num_threads itrealvalue starttime.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return stat{}, false
	}
	return stat{ppid: ppid, start: start, dead: f[0] == "Z" || f[0] == "X"}, true
}

// signal sends sig to p, unless p has exited and its pid now names another
// process: through a pidfd, which stays bound to the process it was opened
// for, once the process behind it has been checked to be p.
func (p proc) signal(sig syscall.Signal) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if errors.Is(err, syscall.ENOSYS) { // before Linux 5.3: check, then kill
		if st, ok := readStat(p.pid); ok && st.start == p.start {
			_ = syscall.Kill(p.pid, sig)
		}
		return
	}
	if err != nil {
		return // gone
	}
	defer unix.Close(fd)
	if st, ok := readStat(p.pid); ok && st.start == p.start {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}
