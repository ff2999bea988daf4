package chaos

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
)

// The discovery workload (see client_discovery.go for the clients'
// events): every client registers an instance and replaces it over and
// over while its Provider reports what it serves. The checker compares
// the reports with the registrations:
//
//   - nothing served that is not registered: every incarnation served was
//     registered, and is not served later than the allowance after it
//     was certainly gone (unregistered, or replaced by the next
//     registration of the same id);
//   - nothing missing: an incarnation certainly registered (from its
//     registration until its unregistration began, its registrar's Session
//     left Connected, or its process was paused or killed) is served by
//     every connected provider once the allowance has passed since both
//     its registration and the provider's last (re)connection (and the end
//     of the provider's last pause).
//
// The allowance is one session timeout: a resync after a reconnection
// needs far less, and a provider connected throughout sees a change within
// milliseconds.

// discoveryTracker follows the clients while the run goes on, to decide
// when they have recovered from a fault. It is safe for concurrent use.
type discoveryTracker struct {
	mu         sync.Mutex
	registered map[string]int64 // client -> last registration
	served     map[string]int64 // client -> last serve report
}

func newDiscoveryTracker() *discoveryTracker {
	return &discoveryTracker{registered: map[string]int64{}, served: map[string]int64{}}
}

func (t *discoveryTracker) observe(e event.Event) {
	if e.Kind != event.Note {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case e.Detail == noteRegistered:
		t.registered[e.Client] = e.At
	case strings.HasPrefix(e.Detail, noteServe):
		t.served[e.Client] = e.At
	}
}

// settleDiscovery reports whether every live client has registered and
// reported what it serves since since, and when the last did.
func (h *harness) settleDiscovery(since int64) (ok bool, at int64, why string) {
	t := h.disc
	t.mu.Lock()
	defer t.mu.Unlock()
	return h.everyLive(since, "not registered and serving again: ", func(c string) (int64, bool) {
		r, s := t.registered[c], t.served[c]
		return max(r, s), r >= since && s >= since
	})
}

// DiscoveryStats sum up a discovery run.
type DiscoveryStats struct {
	Registrations int `json:"registrations"`
	Replacements  int `json:"replacements"`
	Reports       int `json:"reports"`
	// Stale counts incarnations served past the allowance after they were
	// gone, Unknown those served but never registered, Missing the
	// (report, incarnation) pairs of an incarnation registered for longer
	// than the allowance and not served.
	Stale   int `json:"stale"`
	Unknown int `json:"unknown"`
	Missing int `json:"missing"`
}

// incarnation is one registration as the history shows it.
type incarnation struct {
	client  string
	reg     int64 // Register called
	certain int64 // Register returned (0: never)
	// certainEnd: from here on the node may be gone; possibleEnd: from
	// here on it is certainly gone (MaxInt64: unknown).
	certainEnd, possibleEnd int64
}

// checkDiscovery checks the history of a discovery run (see the comment
// at the top of this file); allowance is how long a provider may lag.
func checkDiscovery(events []event.Event, allowance time.Duration) (DiscoveryStats, []oracle.Violation) {
	var st DiscoveryStats
	incs := map[string]*incarnation{}
	current := map[string][]*incarnation{} // client -> incarnations whose certain span is open
	last := map[string]*incarnation{}      // client -> latest incarnation, for the next to end
	resumed := map[string]int64{}          // client -> end of its last pause
	connected := map[string]bool{}         // client -> its Session is connected
	closeCertain := func(c string, at int64) {
		connected[c] = false
		for _, in := range current[c] {
			in.certainEnd = min(in.certainEnd, at)
		}
		current[c] = nil
	}
	type report struct {
		client string
		at     int64
		since  int64
		served []string
	}
	var reports []report
	for _, e := range events {
		switch e.Kind {
		case event.Pause:
			closeCertain(e.Client, e.At)
			continue
		case event.Resume:
			resumed[e.Client] = e.At
			continue
		case event.Crash, event.Exit:
			closeCertain(e.Client, e.At)
			continue
		case event.Note:
		default:
			continue
		}
		switch d := e.Detail; {
		case d == noteReg:
			in := &incarnation{client: e.Client, reg: e.At, certainEnd: math.MaxInt64, possibleEnd: math.MaxInt64}
			incs[e.Resource] = in
		case d == noteRegistered:
			in := incs[e.Resource]
			if in == nil {
				continue
			}
			st.Registrations++
			in.certain = e.At
			if prev := last[e.Client]; prev != nil && prev != in {
				// The node of one id: a registration ends every earlier one.
				prev.possibleEnd = min(prev.possibleEnd, e.At)
				prev.certainEnd = min(prev.certainEnd, e.At)
				st.Replacements++
			}
			last[e.Client] = in
			if connected[e.Client] {
				current[e.Client] = append(current[e.Client], in)
			} else {
				in.certainEnd = e.At // its Session may be ending already
			}
		case d == noteRegFailed:
			if in := incs[e.Resource]; in != nil {
				last[e.Client] = in // it may exist until the next registration
			}
		case d == noteUnreg:
			if in := incs[e.Resource]; in != nil {
				in.certainEnd = min(in.certainEnd, e.At)
			}
		case d == noteUnregistered:
			if in := incs[e.Resource]; in != nil {
				in.possibleEnd = min(in.possibleEnd, e.At)
			}
		case strings.HasPrefix(d, noteState):
			if s := strings.TrimPrefix(d, noteState); s != "Connected" && s != "Reconnected" {
				closeCertain(e.Client, e.At)
			} else {
				connected[e.Client] = true
			}
		case strings.HasPrefix(d, noteServe):
			f := strings.Fields(strings.TrimPrefix(d, noteServe))
			if len(f) == 0 {
				continue
			}
			since, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				continue
			}
			since = max(since, resumed[e.Client])
			reports = append(reports, report{client: e.Client, at: e.At, since: since, served: f[1:]})
		}
	}
	st.Reports = len(reports)
	slack := int64(allowance)
	var out []oracle.Violation
	names := slices.Sorted(maps.Keys(incs))
	for _, r := range reports {
		served := map[string]bool{}
		for _, inc := range r.served {
			served[inc] = true
			in := incs[inc]
			switch {
			case in == nil || r.at < in.reg:
				st.Unknown++
				out = append(out, oracle.Violation{Kind: "unregistered", Resource: inc, ClientA: r.client, At: r.at,
					Detail: fmt.Sprintf("%s served %s, which was never registered", r.client, inc)})
			case in.possibleEnd != math.MaxInt64 && r.at > max(in.possibleEnd, r.since)+slack:
				st.Stale++
				out = append(out, oracle.Violation{Kind: "stale", Resource: inc, ClientA: r.client, ClientB: in.client, At: r.at,
					Detail: fmt.Sprintf("%s served %s %v after it was gone", r.client, inc, time.Duration(r.at-in.possibleEnd).Round(time.Millisecond))})
			}
		}
		for _, inc := range names {
			in := incs[inc]
			if served[inc] || in.certain == 0 {
				continue
			}
			if r.at > max(in.certain, r.since)+slack && r.at < in.certainEnd {
				st.Missing++
				out = append(out, oracle.Violation{Kind: "missing", Resource: inc, ClientA: r.client, ClientB: in.client, At: r.at,
					Detail: fmt.Sprintf("%s did not serve %s, registered %v before", r.client, inc, time.Duration(r.at-in.certain).Round(time.Millisecond))})
			}
		}
	}
	return st, out
}
