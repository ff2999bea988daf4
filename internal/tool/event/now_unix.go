//go:build unix

package event

import "golang.org/x/sys/unix"

// Now returns the CLOCK_MONOTONIC time in nanoseconds, comparable across the
// processes of one machine.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("event: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}
