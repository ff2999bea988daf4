package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
)

// tracker follows who holds what while the run goes on, from the events as
// they arrive, to decide when the group has converged. (The checkers work
// on the full history at the end; this is the cheap online view.) Events
// of one client arrive in order, and the harness records a client's Crash
// only after its last line, so per-client replay is exact. It is safe for
// concurrent use.
type tracker struct {
	mu         sync.Mutex
	held       map[string]map[string]bool // client -> resources
	changes    int                        // holding changes so far
	lastChange int64
	resAcq     map[string][]int64 // resource -> acquire times
	cliAcq     map[string][]int64 // client -> acquire times
}

func newTracker() *tracker {
	return &tracker{held: map[string]map[string]bool{}, resAcq: map[string][]int64{}, cliAcq: map[string][]int64{}}
}

func (t *tracker) observe(e event.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case event.Acquire:
		if t.held[e.Client] == nil {
			t.held[e.Client] = map[string]bool{}
		}
		t.held[e.Client][e.Resource] = true
		t.resAcq[e.Resource] = append(t.resAcq[e.Resource], e.At)
		t.cliAcq[e.Client] = append(t.cliAcq[e.Client], e.At)
	case event.Release:
		delete(t.held[e.Client], e.Resource)
	case event.Crash, event.Exit:
		delete(t.held, e.Client)
	default:
		return
	}
	t.changes++
	t.lastChange = max(t.lastChange, e.At)
}

// holdings returns client -> sorted resources held.
func (t *tracker) holdings() map[string][]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string][]string{}
	for c, rs := range t.held {
		for r := range rs {
			out[c] = append(out[c], r)
		}
		slices.Sort(out[c])
	}
	return out
}

func (t *tracker) changeCount() (n int, last int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changes, t.lastChange
}

// firstAcquire returns the first acquire time at or after since, of
// resource r (byClient false) or by client c (byClient true).
func (t *tracker) firstAcquire(key string, byClient bool, since int64) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.resAcq[key]
	if byClient {
		list = t.cliAcq[key]
	}
	// Lists are in arrival order, which is time order per client and
	// nearly so across clients: scan back until well before since.
	first, found := int64(0), false
	for i := len(list) - 1; i >= 0; i-- {
		at := list[i]
		if at >= since && (!found || at < first) {
			first, found = at, true
		}
		if at < since-int64(time.Second) {
			break
		}
	}
	return first, found
}

// settled reports whether the group is where it should be after a fault
// that ended at since, and from when (at): for the rebalancer, every
// resource held by exactly one live client and holdings balanced; for
// elections, every election led by exactly one live client; for locks,
// every lock acquired again and every live client having acquired a lock
// since then. Nobody else holds anything.
func settled(w Workload, t *tracker, live, resources []string, since int64) (ok bool, at int64, why string) {
	hold := t.holdings()
	_, last := t.changeCount()
	at = max(since, last)
	switch {
	case w.rebalance():
		if err := oracle.CheckBalanced(hold, live, resources); err != nil {
			return false, 0, err.Error()
		}
		return true, at, ""
	case w == Election:
		if why := exactlyOne(hold, live, resources); why != "" {
			return false, 0, why
		}
		return true, at, ""
	}
	if why := exactlyOne(hold, live, resources); why != "" && !strings.HasPrefix(why, "nobody holds") {
		return false, 0, why
	}
	at = since
	var missing []string
	for _, r := range resources {
		if a, ok := t.firstAcquire(r, false, since); ok {
			at = max(at, a)
		} else {
			missing = append(missing, "lock "+r)
		}
	}
	for _, c := range live {
		if a, ok := t.firstAcquire(c, true, since); ok {
			at = max(at, a)
		} else {
			missing = append(missing, "client "+c)
		}
	}
	if len(missing) > 0 {
		return false, 0, "not acquired since the fault: " + strings.Join(missing, ", ")
	}
	return true, at, ""
}

// exactlyOne checks that every resource is held by exactly one live client
// and that nothing else is held. Its message starts with "nobody holds" when
// that is the only problem.
func exactlyOne(hold map[string][]string, live, resources []string) string {
	isLive := map[string]bool{}
	for _, c := range live {
		isLive[c] = true
	}
	wanted := map[string]bool{}
	for _, r := range resources {
		wanted[r] = true
	}
	holders := map[string][]string{}
	var bad []string
	clients := slices.Sorted(maps.Keys(hold))
	for _, c := range clients {
		for _, r := range hold[c] {
			switch {
			case !isLive[c]:
				bad = append(bad, fmt.Sprintf("%s holds %s but is not live", c, r))
			case !wanted[r]:
				bad = append(bad, fmt.Sprintf("%s holds removed %s", c, r))
			default:
				holders[r] = append(holders[r], c)
			}
		}
	}
	var nobody []string
	for _, r := range resources {
		switch n := len(holders[r]); {
		case n == 0:
			nobody = append(nobody, r)
		case n > 1:
			bad = append(bad, fmt.Sprintf("%s held by %v", r, holders[r]))
		}
	}
	if len(bad) > 0 {
		return strings.Join(bad, "; ")
	}
	if len(nobody) > 0 {
		return "nobody holds " + strings.Join(nobody, ", ")
	}
	return ""
}

// pollEvery is how often the harness looks at the tracker while waiting.
const pollEvery = 100 * time.Millisecond
