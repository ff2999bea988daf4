package zkserver

import (
	"syscall"
	"time"
)

// prSetTimerslack is prctl's PR_SET_TIMERSLACK (linux/prctl.h).
const prSetTimerslack = 29

// sleepPrecisely blocks the calling thread in nanosleep, whose timer is
// precise to some microseconds once the thread's timer slack (by default
// 50 µs, by which the kernel may postpone a wake-up to batch it with
// others) is cut to the least.
func sleepPrecisely(d time.Duration) {
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, 1, 0)
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
