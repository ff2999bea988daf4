//go:build unix

package supervise

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// shimEnv, set in its environment, makes zkcoord run as the shim of a
// child (runShim) instead of as the command-line tool.
const shimEnv = "ZKCOORD_SHIM"

// The orders zkcoord sends the shim, one byte each.
const (
	shimTerminate = 't' // SIGTERM (and SIGCONT) to every process of the command
	shimKill      = 'k' // SIGKILL to every process of the command
)

// RunShimIfAsked runs the shim and exits if this process was started as
// one (by [Start], which re-executes the running program). A program that
// starts children calls it first thing in main.
func RunShimIfAsked() {
	if os.Getenv(shimEnv) != "" {
		os.Exit(runShim(os.Args[1:]))
	}
}

// runShim runs a child's command for zkcoord; args are the command's path
// and its argv. The command runs as the leader of a process group of its
// own, whose id the shim reports on file descriptor 4. The shim reads its
// orders (shimTerminate, shimKill) from a pipe whose only write end zkcoord
// holds (file descriptor 3): when zkcoord ends, in whatever way (SIGKILL
// and the OOM killer included), the shim reads end of file and kills
// everything the command started, so that nothing outlives zkcoord. The
// kernel's parent-death signal alone would reach only the direct child: a
// command run through a shell or a wrapper script would leave its real
// work running.
//
// Where the system allows (Linux), the shim is a child subreaper: every
// process the command starts stays below it, also one that left the
// command's process group or session (setsid, setpgid, a double fork, a
// daemonizing wrapper), and every signal and kill reaches each of them as
// well as the group. Elsewhere an orphan goes to init, and the shim's
// reach is the command's process group.
//
// When the command exits, or is killed, the shim kills whatever it left
// (SIGKILL) and exits only once it has reaped every process below it: when
// zkcoord sees the shim exit, they are gone. It exits with the command's
// status (128 plus the signal number if a signal killed it). SIGTERM,
// SIGINT and SIGHUP sent to the shim are passed on to every process.
func runShim(args []string) int {
	orders, report := os.NewFile(3, "zkcoord"), os.NewFile(4, "zkcoord-report")
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	os.Unsetenv(shimEnv)
	if orders == nil || report == nil || len(args) < 2 {
		fmt.Fprintln(os.Stderr, "zkcoord: shim: started without its pipe or command")
		return 127
	}
	adoptOrphans()
	cmd := &exec.Cmd{Path: args[0], Args: args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	// Caught, not ignored: the command must not inherit ignored signals.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "zkcoord: %v\n", err)
		return 127
	}
	t := tree{pgid: cmd.Process.Pid, groupOnly: brokenGroupKill()}
	fmt.Fprintln(report, t.pgid)
	report.Close()
	go func() {
		for sig := range sigs {
			t.signal(sig.(syscall.Signal))
		}
	}()
	go func() {
		b := make([]byte, 1)
		for {
			if _, err := orders.Read(b); err != nil {
				// zkcoord is gone (io.EOF): so goes everything it started.
				t.kill()
				return
			}
			switch b[0] {
			case shimTerminate:
				t.signal(syscall.SIGTERM)
				t.signal(syscall.SIGCONT) // in case it is stopped
			case shimKill:
				t.kill()
			}
		}
	}()
	status := t.waitFor(cmd.Process.Pid)
	// Anything the command left goes with it.
	t.kill()
	t.reap()
	return status
}

// A tree is the processes a command stands for: its process group and,
// where the shim adopts orphans, every process below the shim.
type tree struct {
	pgid      int
	groupOnly bool // brokenGroupKill: the group alone, as the shim once did
}

// signal sends sig to the group and to every process below the shim.
func (t tree) signal(sig syscall.Signal) {
	_ = syscall.Kill(-t.pgid, sig)
	if !t.groupOnly {
		for _, p := range descendants() {
			p.signal(sig)
		}
	}
}

// kill kills the group and every process below the shim, scanning again
// until a scan finds none it has not killed: a process with SIGKILL
// pending can start no other, so one started by a process not yet killed
// is found by the next scan.
func (t tree) kill() {
	_ = syscall.Kill(-t.pgid, syscall.SIGKILL)
	if t.groupOnly {
		return
	}
	killed := map[proc]bool{}
	for {
		n := 0
		for _, p := range descendants() {
			if !killed[p] {
				killed[p] = true
				p.signal(syscall.SIGKILL)
				n++
			}
		}
		if n == 0 {
			return
		}
	}
}

// waitFor reaps the children of the shim, the orphans it adopted as they
// exit and the command, until the command has exited, and returns the
// command's exit status.
func (t tree) waitFor(pid int) int {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil:
			fmt.Fprintf(os.Stderr, "zkcoord: waiting for the command: %v\n", err)
			return 127
		case got == pid && ws.Signaled():
			return 128 + int(ws.Signal())
		case got == pid && ws.Exited():
			return ws.ExitStatus()
		}
	}
}

// reap waits for the children of the shim until none is left: then no
// process is left below the shim. (The group alone with groupOnly.)
func (t tree) reap() {
	which := -1
	if t.groupOnly {
		which = -t.pgid
	}
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(which, &ws, 0, nil)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return // ECHILD: none left
		}
	}
}
