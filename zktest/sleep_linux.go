package zktest

import (
	"syscall"
	"time"
)

// sleepPrecisely blocks the calling thread in nanosleep, whose timer is
// precise to some tens of microseconds.
func sleepPrecisely(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
