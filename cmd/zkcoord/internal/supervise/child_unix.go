//go:build unix

package supervise

import (
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// startGroup starts cmd through the shim (see runShim), which runs it as
// the leader of a new process group and kills every process of the command
// when zkcoord goes away.
func startGroup(cmd *exec.Cmd) (procGroup, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if brokenPdeathsig() {
		if err := startWithPdeathsig(cmd); err != nil {
			return nil, err
		}
		return pgroup(cmd.Process.Pid), nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// zkcoord holds the only write end of this pipe: it sends the shim its
	// orders on it, and when zkcoord is gone, however it went, the shim
	// reads end of file.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// On this one the shim reports the command's process group.
	pr, pw, err := os.Pipe()
	if err != nil {
		w.Close()
		return nil, err
	}
	defer pw.Close()
	cmd.Args = append([]string{"zkcoord-shim", cmd.Path}, cmd.Args...)
	cmd.Path = self
	cmd.Env = append(cmd.Env, shimEnv+"=1")
	cmd.ExtraFiles = []*os.File{r, pw}
	if err := cmd.Start(); err != nil {
		w.Close()
		pr.Close()
		return nil, err
	}
	g := &shimGroup{w: w}
	go func() {
		defer pr.Close()
		var pgid int
		if _, err := fmt.Fscan(pr, &pgid); err == nil && pgid > 0 {
			g.pgid.Store(int64(pgid))
		}
	}()
	return g, nil
}

// shimGroup is a command started through the shim: its orders go through
// the pipe.
type shimGroup struct {
	w    *os.File
	pgid atomic.Int64 // the command's process group, once the shim has reported it
}

func (g *shimGroup) terminate() bool {
	_, _ = g.w.Write([]byte{shimTerminate})
	return true
}

func (g *shimGroup) kill() { _, _ = g.w.Write([]byte{shimKill}) }

// reaped: a shim that exits by itself has killed and reaped every process
// of the command first. One that was killed (the shim alone, by hand or by
// the OOM killer) could not: zkcoord kills the command's group, all that it
// can still find.
func (g *shimGroup) reaped(ps *os.ProcessState) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if pgid := g.pgid.Load(); pgid > 0 {
			_ = syscall.Kill(-int(pgid), syscall.SIGKILL)
		}
	}
	g.w.Close()
}

// pgroup is the process group of a command started directly.
type pgroup int

func (g pgroup) terminate() bool {
	_ = syscall.Kill(-int(g), syscall.SIGTERM)
	_ = syscall.Kill(-int(g), syscall.SIGCONT) // in case it is stopped
	return true
}

func (g pgroup) kill() { _ = syscall.Kill(-int(g), syscall.SIGKILL) }

func (g pgroup) reaped(*os.ProcessState) { g.kill() }

// exitStatusOf returns a process's exit code, or 128 plus the signal
// number if a signal killed it.
func exitStatusOf(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// signalName names signal number n ("SIGKILL").
func signalName(n int) string { return unix.SignalName(syscall.Signal(n)) }
