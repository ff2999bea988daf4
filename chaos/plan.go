package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Kind names a fault of the schedule.
type Kind string

// Fault kinds. Durations are relative to the session timeout T the clients
// ask for; "short" is below the client's self-expiry limit (LostAfter × T)
// by more than the ping interval (T/3), so the client keeps its session;
// "medium" is between that limit and T, so the client gives its session up
// but the server may not have expired it yet; "long" is beyond T, so that
// the server expires the session.
const (
	// KillClient: SIGKILL a client process, restart it (same name) after
	// Dur.
	KillClient Kind = "kill-client"
	// PauseShort, PauseMedium, PauseLong: SIGSTOP a client for Dur, then
	// SIGCONT.
	PauseShort  Kind = "pause-short"
	PauseMedium Kind = "pause-medium"
	PauseLong   Kind = "pause-long"
	// PartitionShort, PartitionMedium, PartitionLong: cut a client off from
	// every ZooKeeper server (its fault proxy drops all traffic) for Dur.
	PartitionShort  Kind = "partition-short"
	PartitionMedium Kind = "partition-medium"
	PartitionLong   Kind = "partition-long"
	// KillLeader, KillFollower: SIGKILL the ZooKeeper leader (or a
	// follower) and restart it after Dur.
	KillLeader   Kind = "kill-zk-leader"
	KillFollower Kind = "kill-zk-follower"
	// PauseLeader, PauseFollower: SIGSTOP a ZooKeeper server for Dur.
	PauseLeader   Kind = "pause-zk-leader"
	PauseFollower Kind = "pause-zk-follower"
	// AddResource, RemoveResource: an operator adds a new resource or
	// removes an existing one.
	AddResource    Kind = "add-resource"
	RemoveResource Kind = "remove-resource"
	// AddClient, RemoveClient: a new client joins; a client leaves
	// gracefully.
	AddClient    Kind = "add-client"
	RemoveClient Kind = "remove-client"
	// Storm: several client faults (Sub) in quick succession, on distinct
	// clients, overlapping in time.
	Storm Kind = "storm"
)

// Kinds lists every fault kind, in the order used for reports.
func Kinds() []Kind {
	return []Kind{KillClient, PauseShort, PauseMedium, PauseLong, PartitionShort, PartitionMedium, PartitionLong,
		KillLeader, KillFollower, PauseLeader, PauseFollower, AddResource, RemoveResource, AddClient, RemoveClient, Storm,
		TermPartitioned, PartitionPartial}
}

// KindsOf lists the fault kinds the planner draws for workload w: the cli
// workload has its own (see cli.go); the queue, counter and discovery
// workloads, which have one queue, one set of nodes or one service, have no
// resources to add or remove.
func KindsOf(w Workload) []Kind {
	if w == CLI {
		return []Kind{KillClient, PartitionMedium, PartitionLong, TermPartitioned, PartitionPartial}
	}
	return slices.DeleteFunc(Kinds(), func(k Kind) bool {
		return k == TermPartitioned || k == PartitionPartial ||
			(w == Queue || w == Counter || w == Discovery) && (k == AddResource || k == RemoveResource)
	})
}

// onClient reports whether the kind targets one client process.
func (k Kind) onClient() bool {
	switch k {
	case KillClient, PauseShort, PauseMedium, PauseLong, PartitionShort, PartitionMedium, PartitionLong, RemoveClient,
		TermPartitioned, PartitionPartial:
		return true
	}
	return false
}

// Fault is one entry of the schedule.
type Fault struct {
	Kind Kind `json:"kind"`
	// Pick chooses the target among the live clients, sorted by name:
	// client number Pick modulo their count. Storm sub-faults take
	// distinct clients.
	Pick int `json:"pick,omitempty"`
	// Dur is how long the fault lasts: pause, partition, or down time
	// before a restart.
	Dur time.Duration `json:"dur,omitempty"`
	// Wait is the quiet time before the fault starts (for a sub-fault of a
	// storm: the time after the previous sub-fault started).
	Wait time.Duration `json:"wait,omitempty"`
	// Sub holds the sub-faults of a Storm.
	Sub []Fault `json:"sub,omitempty"`
}

func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	if f.Kind.onClient() {
		fmt.Fprintf(&b, " (client pick %d)", f.Pick)
	}
	if f.Dur > 0 {
		fmt.Fprintf(&b, " for %v", f.Dur.Round(time.Millisecond))
	}
	if len(f.Sub) > 0 {
		b.WriteString(" [")
		for i, s := range f.Sub {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "+%v %s", s.Wait.Round(time.Millisecond), s)
		}
		b.WriteString("]")
	}
	return b.String()
}

// pickRange bounds Fault.Pick; it is a multiple of every group size up to 8.
const pickRange = 840

// Limits bound what a Planner may do to the group.
type Limits struct {
	SessionTimeout time.Duration // T
	LostAfter      float64       // the clients' self-expiry fraction of T
	Clients        int           // initial number of clients
	MinClients     int
	MaxClients     int
	Resources      int // initial number of resources
	MinResources   int
	MaxResources   int
}

// Planner draws a reproducible fault schedule from a seed: the same seed and
// limits give the same sequence of faults. The group's size changes only
// through the schedule (AddClient, RemoveClient, AddResource,
// RemoveResource), so the Planner tracks it and never plans to go beyond
// the limits. A Planner is not safe for concurrent use.
type Planner struct {
	rng       *rand.Rand
	lim       Limits
	clients   int
	resources int
}

// NewPlanner returns a Planner for seed.
func NewPlanner(seed uint64, lim Limits) *Planner {
	return &Planner{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), lim: lim,
		clients: lim.Clients, resources: lim.Resources}
}

// weights of the kinds drawn by Next.
var weights = []struct {
	k Kind
	w int
}{
	{KillClient, 12}, {PauseShort, 5}, {PauseMedium, 5}, {PauseLong, 8},
	{PartitionShort, 5}, {PartitionMedium, 5}, {PartitionLong, 8},
	{KillLeader, 5}, {KillFollower, 4}, {PauseLeader, 3}, {PauseFollower, 3},
	{AddResource, 5}, {RemoveResource, 5}, {AddClient, 5}, {RemoveClient, 5}, {Storm, 8},
}

// Next draws the next fault.
func (p *Planner) Next() Fault {
	total := 0
	for _, w := range weights {
		total += w.w
	}
	for {
		r := p.rng.IntN(total)
		var k Kind
		for _, w := range weights {
			if r < w.w {
				k = w.k
				break
			}
			r -= w.w
		}
		if f, ok := p.make(k); ok {
			f.Wait = p.between(0, time.Second)
			return f
		}
	}
}

// add counts one more client or resource, n, unless there are most
// already.
func add(n *int, most int) bool {
	if *n >= most {
		return false
	}
	*n++
	return true
}

// remove makes f remove one client or resource, of n, picked at random,
// unless there are least already.
func (p *Planner) remove(f Fault, n *int, least int) (Fault, bool) {
	if *n <= least {
		return f, false
	}
	*n--
	f.Pick = p.rng.IntN(pickRange)
	return f, true
}

// make builds a fault of kind k, or reports that the group's limits forbid
// it now.
func (p *Planner) make(k Kind) (Fault, bool) {
	f := Fault{Kind: k}
	switch k {
	case AddClient:
		return f, add(&p.clients, p.lim.MaxClients)
	case RemoveClient:
		return p.remove(f, &p.clients, p.lim.MinClients)
	case AddResource:
		return f, add(&p.resources, p.lim.MaxResources)
	case RemoveResource:
		return p.remove(f, &p.resources, p.lim.MinResources)
	case Storm:
		n := 2 + p.rng.IntN(3)
		if n > p.clients {
			n = p.clients
		}
		if n < 2 {
			return f, false
		}
		kinds := []Kind{KillClient, PauseShort, PauseMedium, PauseLong, PartitionShort, PartitionMedium, PartitionLong}
		for i := range n {
			s, _ := p.make(kinds[p.rng.IntN(len(kinds))])
			if i > 0 {
				s.Wait = p.between(0, p.lim.SessionTimeout/2)
			}
			f.Sub = append(f.Sub, s)
		}
		return f, true
	}
	T := p.lim.SessionTimeout
	lost := p.lim.LostAfter
	f.Pick = p.rng.IntN(pickRange)
	switch k {
	case KillClient:
		f.Dur = p.between(0, T)
	case PauseShort, PartitionShort:
		// Below the self-expiry limit even when the fault starts just
		// before a ping was due (pings go every T/3).
		f.Dur = p.frac(0.1, max(lost-0.35, 0.15))
	case PauseMedium, PartitionMedium:
		f.Dur = p.frac(lost+0.05, 0.95)
	case PauseLong, PartitionLong:
		f.Dur = p.frac(1.5, 2.5)
	case KillLeader, KillFollower:
		f.Pick = 0
		f.Dur = p.between(time.Second, 2*T)
	case PauseLeader, PauseFollower:
		f.Pick = 0
		f.Dur = p.frac(0.2, 1.5)
	}
	return f, true
}

// frac draws a duration uniformly in [lo·T, hi·T).
func (p *Planner) frac(lo, hi float64) time.Duration {
	T := float64(p.lim.SessionTimeout)
	return time.Duration(lo*T + p.rng.Float64()*(hi-lo)*T).Round(time.Millisecond)
}

// between draws a duration uniformly in [lo, hi).
func (p *Planner) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return (lo + time.Duration(p.rng.Int64N(int64(hi-lo)))).Round(time.Millisecond)
}

// Plan returns the first n faults that a Run with o (Seed, Workload and the
// group's limits; Duration does not matter) draws.
func Plan(o Options, n int) ([]Fault, error) {
	if o.Duration <= 0 {
		o.Duration = time.Hour
	}
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	var p interface{ Next() Fault } = NewPlanner(o.Seed, o.limits())
	if o.Workload == CLI {
		p = newCLIPlanner(&o)
	}
	out := make([]Fault, n)
	for i := range out {
		out[i] = p.Next()
	}
	return out, nil
}
