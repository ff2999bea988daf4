//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
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
	shimTerminate = 't' // SIGTERM (and SIGCONT) to the command's group
	shimKill      = 'k' // SIGKILL to the command's group
)

// runShimIfAsked runs the shim and exits if zkcoord was started as one.
func runShimIfAsked() {
	if os.Getenv(shimEnv) != "" {
		os.Exit(runShim(os.Args[1:]))
	}
}

// runShim runs a child's command for zkcoord; args are the command's path
// and its argv. The command runs as the leader of a process group of its
// own, whose id the shim reports on file descriptor 4. The shim reads its
// orders (shimTerminate, shimKill) from a pipe whose only write end zkcoord
// holds (file descriptor 3): when zkcoord
// ends, in whatever way (SIGKILL and the OOM killer included), the shim
// reads end of file and kills the whole group, so that nothing the command
// started outlives zkcoord. The kernel's parent-death signal alone would
// reach only the direct child: a command run through a shell or a wrapper
// script would leave its real work running.
//
// Where the system allows (Linux), the shim adopts the orphans of the
// command's tree, and it exits only once every process of the group has
// been reaped: when zkcoord sees the shim exit, the group is gone. It exits
// with the command's status (128 plus the signal number if a signal killed
// it). SIGTERM, SIGINT and SIGHUP sent to the shim are passed on to the
// group.
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
	pgid := cmd.Process.Pid
	fmt.Fprintln(report, pgid)
	report.Close()
	go func() {
		for sig := range sigs {
			_ = syscall.Kill(-pgid, sig.(syscall.Signal))
		}
	}()
	go func() {
		b := make([]byte, 1)
		for {
			if _, err := orders.Read(b); err != nil {
				// zkcoord is gone (io.EOF): so goes everything it started.
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				return
			}
			switch b[0] {
			case shimTerminate:
				_ = syscall.Kill(-pgid, syscall.SIGTERM)
				_ = syscall.Kill(-pgid, syscall.SIGCONT) // in case it is stopped
			case shimKill:
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
	}()
	err := cmd.Wait()
	// Anything the command left in its group goes with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	reapGroup(pgid)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return exitStatusOf(ee.ProcessState)
	case err != nil && !errors.Is(err, io.EOF):
		fmt.Fprintf(os.Stderr, "zkcoord: %v\n", err)
		return 127
	}
	return 0
}

// reapGroup waits for every child of the shim in process group pgid (the
// group's orphans, where adoptOrphans made the shim adopt them) until none
// is left.
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-pgid, &ws, 0, nil)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return // ECHILD: none left
		}
	}
}
