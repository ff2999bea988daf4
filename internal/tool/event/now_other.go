//go:build !unix

package event

import "time"

// Now returns the wall-clock time in nanoseconds. Without a monotonic clock
// shared by processes it is what the processes of one machine can compare;
// a clock step during a run can misorder events.
func Now() int64 { return time.Now().UnixNano() }
