package supervise

import (
	"fmt"
	"os"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

// startGroup starts cmd in a job object that kills every process in it
// when its last handle closes: zkcoord holds the only handle, so the
// command and whatever it started die with zkcoord, also when zkcoord is
// killed. Processes the
// command starts before it has been put in the job (a few microseconds
// after it starts) escape it.
func startGroup(cmd *exec.Cmd) (procGroup, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("creating a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("setting up a job object: %w", err)
	}
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		windows.CloseHandle(job)
		return nil, fmt.Errorf("putting the command in a job object: %w", err)
	}
	return jobGroup{job: job, p: cmd.Process}, nil
}

// jobGroup is a command in its job object.
type jobGroup struct {
	job windows.Handle
	p   *os.Process
}

// terminate reports false: Windows has no signal to ask a process to stop,
// so a stop kills at once.
func (g jobGroup) terminate() bool { return false }

func (g jobGroup) kill() {
	if err := windows.TerminateJobObject(g.job, 1); err != nil {
		_ = g.p.Kill()
	}
}

func (g jobGroup) reaped(*os.ProcessState) {
	g.kill()
	windows.CloseHandle(g.job)
}

// exitStatusOf returns a process's exit code.
func exitStatusOf(ps *os.ProcessState) int { return ps.ExitCode() }

// signalName names signal number n.
func signalName(n int) string { return fmt.Sprintf("signal %d", n) }
