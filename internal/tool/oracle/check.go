package oracle

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Interval is one holding: Client held Resource from Start (its acquire) to
// End (its release, or the crash of its process). Open is true, and End is
// math.MaxInt64, while it is still held at the end of the history.
type Interval struct {
	Resource string     `json:"resource"`
	Client   string     `json:"client"`
	Start    int64      `json:"start"`
	End      int64      `json:"end,omitempty"`
	Open     bool       `json:"open,omitempty"`
	Token    int64      `json:"token,omitempty"` // from the acquire event
	EndedBy  event.Kind `json:"ended_by,omitempty"`
}

// Violation is a breach of invariant 1, or an event sequence that makes no
// sense (ClientB empty).
type Violation struct {
	Kind     string `json:"kind"` // "overlap", "token", "sequence" or "invalid"
	Resource string `json:"resource,omitempty"`
	ClientA  string `json:"client_a"`
	ClientB  string `json:"client_b,omitempty"`
	At       int64  `json:"at"`
	Detail   string `json:"detail"`
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %d: ", v.Kind, v.At)
	if v.Resource != "" {
		fmt.Fprintf(&b, "resource %q ", v.Resource)
	}
	if v.ClientB != "" {
		fmt.Fprintf(&b, "clients %q and %q", v.ClientA, v.ClientB)
	} else {
		fmt.Fprintf(&b, "client %q", v.ClientA)
	}
	return b.String() + ": " + v.Detail
}

// intervals replays sorted events into holdings, reporting sequences that
// make no sense: double acquire, release of what is not held, accepted use
// outside a holding, unparseable lines.
func intervals(events []event.Event) ([]Interval, []Violation) {
	var out []Interval
	var bad []Violation
	open := map[string]map[string]int{} // client -> resource -> index in out
	for _, e := range events {
		held := open[e.Client]
		switch e.Kind {
		case event.Acquire:
			if i, ok := held[e.Resource]; ok {
				bad = append(bad, Violation{Kind: "sequence", Resource: e.Resource, ClientA: e.Client, At: e.At,
					Detail: fmt.Sprintf("acquired again while holding it since %d", out[i].Start)})
				continue
			}
			if held == nil {
				held = map[string]int{}
				open[e.Client] = held
			}
			held[e.Resource] = len(out)
			out = append(out, Interval{Resource: e.Resource, Client: e.Client, Start: e.At,
				End: math.MaxInt64, Open: true, Token: e.Token})
		case event.Release:
			i, ok := held[e.Resource]
			if !ok {
				bad = append(bad, Violation{Kind: "sequence", Resource: e.Resource, ClientA: e.Client, At: e.At,
					Detail: "released without holding it"})
				continue
			}
			out[i].End, out[i].Open, out[i].EndedBy = e.At, false, event.Release
			delete(held, e.Resource)
		case event.Crash, event.Exit:
			for _, i := range held {
				out[i].End, out[i].Open, out[i].EndedBy = e.At, false, e.Kind
			}
			delete(open, e.Client)
		case event.Use:
			if _, ok := held[e.Resource]; !ok {
				bad = append(bad, Violation{Kind: "sequence", Resource: e.Resource, ClientA: e.Client, At: e.At,
					Detail: fmt.Sprintf("accepted use (token %d) without holding it", e.Token)})
			}
		case event.Invalid:
			bad = append(bad, Violation{Kind: "invalid", ClientA: e.Client, At: e.At,
				Detail: "unparseable event line: " + e.Detail})
		}
	}
	return out, bad
}

// overlaps finds, per resource, every pair of holdings by different clients
// that share an instant (holdings are half-open: [Start, End)), and fencing
// tokens that go backwards from one holder to the next.
func overlaps(ivs []Interval) []Violation {
	byRes := map[string][]Interval{}
	for _, iv := range ivs {
		byRes[iv.Resource] = append(byRes[iv.Resource], iv)
	}
	resources := slices.Sorted(maps.Keys(byRes))
	var out []Violation
	for _, r := range resources {
		list := byRes[r]
		slices.SortStableFunc(list, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
		var active []Interval
		var last Interval // previous holder with a token
		for _, iv := range list {
			active = slices.DeleteFunc(active, func(a Interval) bool { return a.End <= iv.Start })
			for _, a := range active {
				if a.Client == iv.Client {
					continue // reported as a sequence error already
				}
				out = append(out, Violation{Kind: "overlap", Resource: r, ClientA: a.Client, ClientB: iv.Client,
					At: iv.Start, Detail: fmt.Sprintf("%q holds it over [%d, %s), %q acquired it at %d (overlap %s)",
						a.Client, a.Start, end(a), iv.Client, iv.Start, overlapLen(a, iv))})
			}
			active = append(active, iv)
			if iv.Token != 0 {
				if last.Token != 0 && (iv.Token < last.Token || iv.Token == last.Token && iv.Client != last.Client) {
					out = append(out, Violation{Kind: "token", Resource: r, ClientA: last.Client, ClientB: iv.Client,
						At: iv.Start, Detail: fmt.Sprintf("fencing token went from %d to %d", last.Token, iv.Token)})
				}
				last = iv
			}
		}
	}
	return out
}

func end(iv Interval) string {
	if iv.Open {
		return "end"
	}
	return fmt.Sprint(iv.End)
}

func overlapLen(a, b Interval) string {
	lo, hi := max(a.Start, b.Start), min(a.End, b.End)
	if hi == math.MaxInt64 {
		return "until the end"
	}
	return time.Duration(hi - lo).String()
}

// Intervals returns every holding, in the order of their acquire events.
func (h *History) Intervals() []Interval {
	ivs, _ := intervals(h.Events())
	return ivs
}

// CheckExclusive checks invariant 1, No Double Resource Access: no instant at
// which two clients hold the same resource. A client holds a resource from
// its Acquire event to its Release event, or to a Crash or Exit event of that
// client; a Pause does not end a holding. It also reports fencing tokens
// (from Acquire events) that do not increase from one holder to the next, and
// event sequences that make no sense (double acquire, release of what is not
// held, an accepted Use outside a holding, unparseable event lines). It
// returns nil when all is well.
func (h *History) CheckExclusive() []Violation {
	ivs, bad := intervals(h.Events())
	return append(bad, overlaps(ivs)...)
}

// CheckFenced is [History.CheckExclusive] for runs that pause processes on
// purpose. A process stopped for longer than its session timeout cannot
// stop its work in time, so its holding overlaps its successor's; what must
// then hold is that the resource itself refused the stale holder. An overlap
// between an earlier holder A and a later holder B is excused when A's
// process was paused at some instant within slack before B acquired (slack
// covers the time a resumed process needs to notice its loss) and A made no
// accepted Use of the resource during the overlap. Every other violation is
// returned.
func (h *History) CheckFenced(slack time.Duration) []Violation {
	events := h.Events()
	ivs, bad := intervals(events)
	paused := Pauses(events)
	byKey := map[[2]string][]event.Event{} // accepted uses by client and resource
	for _, e := range events {
		if e.Kind == event.Use {
			k := [2]string{e.Client, e.Resource}
			byKey[k] = append(byKey[k], e)
		}
	}
	holders := map[[2]string][]Interval{}
	for _, iv := range ivs {
		k := [2]string{iv.Client, iv.Resource}
		holders[k] = append(holders[k], iv)
	}
	out := bad
	for _, v := range overlaps(ivs) {
		if v.Kind != "overlap" || !excused(v, paused[v.ClientA], byKey[[2]string{v.ClientA, v.Resource}],
			holders[[2]string{v.ClientA, v.Resource}], holders[[2]string{v.ClientB, v.Resource}], int64(slack)) {
			out = append(out, v)
		}
	}
	return out
}

func excused(v Violation, paused []PauseSpan, uses []event.Event, aIvs, bIvs []Interval, slack int64) bool {
	// v.At is B's acquire time; find A's holding that covers it.
	var a, b Interval
	found := false
	for _, iv := range aIvs {
		if iv.Start <= v.At && v.At < iv.End {
			a, found = iv, true
		}
	}
	for _, iv := range bIvs {
		if iv.Start == v.At {
			b = iv
		}
	}
	if !found {
		return false
	}
	wasPaused := false
	for _, p := range paused {
		if p.From <= v.At && p.To >= v.At-slack {
			wasPaused = true
		}
	}
	if !wasPaused {
		return false
	}
	until := min(a.End, b.End)
	for _, u := range uses {
		if u.At >= v.At && u.At < until {
			return false
		}
	}
	return true
}

// Holdings returns what each client holds at the end of the history: client
// to sorted resources. Clients holding nothing are absent.
func (h *History) Holdings() map[string][]string {
	out := map[string][]string{}
	for _, iv := range h.Intervals() {
		if iv.Open {
			out[iv.Client] = append(out[iv.Client], iv.Resource)
		}
	}
	for _, l := range out {
		slices.Sort(l)
	}
	return out
}

// ErrUnbalanced is wrapped by the errors of [CheckBalanced].
var ErrUnbalanced = errors.New("oracle: resources not evenly held")

// CheckBalanced checks invariant 2, All Resources Evenly Accessed, on
// holdings (client to resources, as [History.Holdings] returns): every
// resource is held by exactly one of clients, nobody else holds anything,
// nothing unknown is held, and the numbers held by clients (absent means
// none) differ by at most one. With no clients, nothing may be held.
// Duplicates in clients and resources are ignored.
func CheckBalanced(holdings map[string][]string, clients, resources []string) error {
	live := map[string]bool{}
	for _, c := range clients {
		live[c] = true
	}
	wanted := map[string]bool{}
	for _, r := range resources {
		wanted[r] = true
	}
	holders := slices.Sorted(maps.Keys(holdings))
	owner := map[string]string{}
	var problems []string
	for _, c := range holders {
		for _, r := range holdings[c] {
			switch {
			case !live[c]:
				problems = append(problems, fmt.Sprintf("%q is not a live client but holds %q", c, r))
			case !wanted[r]:
				problems = append(problems, fmt.Sprintf("%q holds unknown resource %q", c, r))
			case owner[r] != "":
				problems = append(problems, fmt.Sprintf("%q held by both %q and %q", r, owner[r], c))
			default:
				owner[r] = c
			}
		}
	}
	if len(live) > 0 {
		var missing []string
		for r := range wanted {
			if owner[r] == "" {
				missing = append(missing, r)
			}
		}
		slices.Sort(missing)
		for _, r := range missing {
			problems = append(problems, fmt.Sprintf("%q held by nobody", r))
		}
		lo, hi := math.MaxInt, -1
		var loC, hiC string
		names := slices.Sorted(maps.Keys(live))
		for _, c := range names {
			n := len(holdings[c])
			if n < lo {
				lo, loC = n, c
			}
			if n > hi {
				hi, hiC = n, c
			}
		}
		if hi-lo > 1 {
			problems = append(problems, fmt.Sprintf("%q holds %d but %q holds %d", hiC, hi, loC, lo))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	const max = 10
	if len(problems) > max {
		problems = append(problems[:max], fmt.Sprintf("... %d more", len(problems)-max))
	}
	return fmt.Errorf("%w: %s", ErrUnbalanced, strings.Join(problems, "; "))
}
