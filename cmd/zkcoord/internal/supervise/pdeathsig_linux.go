package supervise

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// startWithPdeathsig starts cmd with the kernel's parent-death signal
// (SIGKILL) and no shim: the broken behaviour brokenEnv=pdeathsig restores
// for the chaos harness, where a killed zkcoord takes the command with it
// but not the command's own children.
func startWithPdeathsig(cmd *exec.Cmd) error {
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return spawn(cmd.Start)
}

// spawnc feeds the goroutine that starts such children. It is locked to its
// OS thread and never returns, because Linux sends the parent-death signal
// when the thread that forked the child ends, not when the process ends.
var (
	spawnOnce sync.Once
	spawnc    chan func()
)

func spawn(start func() error) error {
	spawnOnce.Do(func() {
		spawnc = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range spawnc {
				f()
			}
		}()
	})
	res := make(chan error, 1)
	spawnc <- func() { res <- start() }
	return <-res
}
