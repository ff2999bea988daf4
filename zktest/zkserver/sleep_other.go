//go:build !linux

package zkserver

import "time"

// sleepPrecisely sleeps as precisely as the runtime's timers allow.
func sleepPrecisely(d time.Duration) { time.Sleep(d) }
