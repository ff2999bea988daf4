package zktest

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// delayToxicType is the toxiproxy toxic behind Proxy.Delay. Toxiproxy's own
// latency toxic counts in whole milliseconds, too coarse for the delays of
// one rack (a quarter of a millisecond).
const delayToxicType = "zktest_delay"

// delayToxic passes every chunk of data on once Micros microseconds have
// passed since the proxy read it, so chunks in flight do not add up their
// delays.
type delayToxic struct {
	Micros int64 `json:"micros"`
}

// GetBufferSize lets chunks queue behind the one being delayed.
func (t *delayToxic) GetBufferSize() int { return 1024 }

// Pipe delays the stream until the proxy interrupts it.
func (t *delayToxic) Pipe(stub *toxics.ToxicStub) {
	d := time.Duration(t.Micros) * time.Microsecond
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			wait := d - time.Since(c.Timestamp)
			switch {
			case wait <= 0:
			case wait < coarseTimers:
				// The runtime's timers may fire a millisecond late
				// (they wait in epoll with a timeout in whole
				// milliseconds); a short wait is slept precisely.
				sleepPrecisely(wait)
			default:
				select {
				case <-time.After(wait):
				case <-stub.Interrupt:
					stub.Output <- c // keep the chunk; the next toxic takes over
					return
				}
			}
			stub.Output <- c
		}
	}
}

// coarseTimers is the wait below which the runtime's timers are too coarse.
const coarseTimers = 5 * time.Millisecond

func init() {
	toxics.Register(delayToxicType, new(delayToxic))
}
