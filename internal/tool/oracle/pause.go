package oracle

import (
	"math"

	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// PauseSpan is a stretch of time, event.Now times (ns), during which a
// client's process was stopped. To is math.MaxInt64 for a pause that
// never ended.
type PauseSpan struct{ From, To int64 }

// Pauses returns, per client, the spans during which its process was
// stopped: from a Pause to the next Resume, Crash or Exit (a crash or exit
// ends a pause).
func Pauses(events []event.Event) map[string][]PauseSpan {
	out := map[string][]PauseSpan{}
	since := map[string]int64{}
	for _, e := range events {
		switch e.Kind {
		case event.Pause:
			if _, ok := since[e.Client]; !ok {
				since[e.Client] = e.At
			}
		case event.Resume, event.Crash, event.Exit:
			if s, ok := since[e.Client]; ok {
				out[e.Client] = append(out[e.Client], PauseSpan{s, e.At})
				delete(since, e.Client)
			}
		}
	}
	for c, s := range since {
		out[c] = append(out[c], PauseSpan{s, math.MaxInt64})
	}
	return out
}
