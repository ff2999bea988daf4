package chaos

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/launch"
)

// Workload is what the client processes do with the resources.
type Workload string

// Workloads.
const (
	// RebalanceIncremental, RebalanceResource, RebalanceGlobal: every
	// client is a rebalance.Client (mode incremental, resource-barrier or
	// global-barrier) and uses the resources assigned to it.
	RebalanceIncremental Workload = "rebalance-incremental"
	RebalanceResource    Workload = "rebalance-resource"
	RebalanceGlobal      Workload = "rebalance-global"
	// Election: every client campaigns in one election per resource and
	// uses the resource while it leads, resigning now and then.
	Election Workload = "election"
	// Lock: every client takes one lock.Mutex per resource over and over,
	// using the resource while it holds the lock.
	Lock Workload = "lock"
	// CLI: every client is the zkcoord binary itself (lock, elect or
	// rebalance --exec, in turn), running through a shell a command that
	// uses the resource; the faults hit zkcoord (see cli.go).
	CLI Workload = "cli"
	// Queue: every client is a consumer of one queue.WorkQueue, which the
	// harness fills with numbered items; a consumer takes an item,
	// processes it (uses it through the fenced service, the claim's czxid
	// as the token) and acknowledges it (see client_queue.go, queue.go).
	Queue Workload = "queue"
	// Recovery: the lock and election clients again (a lock for every
	// odd-numbered resource, an election for every even one), but every
	// resource's loop runs under zkcoord.Supervise, which opens a new
	// Session after a loss and starts the loop again on it.
	Recovery Workload = "recovery"
	// Counter: every client writes, in rounds, one shared counter.Counter
	// (Add) and config nodes (Create of a node per round with the same
	// bytes as every other client, JSON.Update appending to a list), with
	// the faults cutting replies off; the harness checks the end state
	// against what was acknowledged (see client_counter.go, counter.go).
	Counter Workload = "counter"
	// Discovery: every client registers a discovery instance and replaces
	// it over and over (unregister, register), while a discovery.Provider
	// of its own reports what it serves; the checker compares the two
	// (see discovery.go, client_discovery.go).
	Discovery Workload = "discovery"
)

// Workloads lists every workload.
func Workloads() []Workload {
	return []Workload{RebalanceIncremental, RebalanceResource, RebalanceGlobal, Election, Lock, CLI, Queue, Recovery, Counter, Discovery}
}

// ParseWorkload checks a workload name.
func ParseWorkload(s string) (Workload, error) {
	for _, w := range Workloads() {
		if string(w) == s {
			return w, nil
		}
	}
	return "", fmt.Errorf("%w: unknown workload %q", ErrInvalidOptions, s)
}

func (w Workload) rebalance() bool {
	return w == RebalanceIncremental || w == RebalanceResource || w == RebalanceGlobal
}

// Bugs a client can be told to have, to show that the checkers catch them.
const (
	// BugLateStop: when told to give a resource up (Unassigned, the end of
	// a lock lease or of a leadership), the client lets the library carry
	// on at once but keeps using the resource for a while: the next owner
	// starts while it still works.
	BugLateStop = "late-stop"
	// BugGrace, BugPdeathsig and BugGroupKill (cli workload only) restore,
	// in the zkcoord binary of the bug clients, a stop that waits out the
	// whole grace whatever happens meanwhile; children protected by the
	// kernel's parent-death signal alone, which does not reach
	// grandchildren; and a shim that signals, kills and reaps the
	// command's process group alone, which does not reach a worker that
	// left it (setsid, a double fork). With BugGroupKill every command
	// daemonizes its worker.
	BugGrace     = "grace"
	BugPdeathsig = "pdeathsig"
	BugGroupKill = "group"
	// BugMixedKinds (cli workload only) restores, in the zkcoord binary of
	// the bug clients, a lock that ignores contenders of another kind on
	// its path; and in the run the first lock client takes the read side
	// of a read/write lock ("zkcoord lock --read") where the others take a
	// mutex, so that a reader holds beside a writer. A zkcoord without the
	// bug (Options.Zkcoord built without the zkcoord_broken tag) refuses
	// the second kind on a path (exit 1, lock.ErrOtherKind), and the run
	// passes.
	BugMixedKinds = "mixed-kinds"
	// BugAckFirst (queue workload only): the consumer acknowledges an item
	// as soon as it has taken it and processes it afterwards, so an item
	// whose consumer dies mid-item is lost.
	BugAckFirst = "ack-first"
	// BugValueSettle (counter workload only; every client has it): a write
	// whose outcome the library reports unknown is settled as zkcoord did
	// before zkcoord.Settle, by value: an Add is taken as done if the next
	// version holds the count it would have made, a Create if the node
	// holds its bytes at version 0, and an Update is run again.
	BugValueSettle = "value-settle"
	// BugClaimCallerCtx (queue workload only): the consumer's WorkQueue
	// sends its claims with the caller's context, as it did before claims
	// were settled: a take whose deadline expires while its claim is in
	// flight returns, the claim commits, and the item stays claimed, by
	// nobody, for as long as the consumer's Session lives. The broken
	// build makes it certain for every hurried take that claims an item,
	// so that a run always shows it. It needs the
	// clients built with the zkcoord_broken_claim tag: no other build of
	// the queue package can be switched to it.
	BugClaimCallerCtx = "claim-caller-ctx"
)

// ErrInvalidOptions is wrapped by the errors of Run for bad Options.
var ErrInvalidOptions = errors.New("chaos: invalid options")

// Options configure a Run. Zero fields take the defaults noted.
type Options struct {
	Workload Workload
	// Seed seeds the fault schedule (and the clients' random choices).
	Seed uint64
	// Duration: new faults are started until this much time has passed
	// since the first one. Ignored when Faults is set.
	Duration time.Duration
	// Faults, if not empty, is the schedule to run instead of one drawn
	// from Seed.
	Faults []Fault

	// Clients is the initial number of clients (default 4); the schedule
	// keeps it within [MinClients, MaxClients] (default [2, Clients+2]).
	Clients, MinClients, MaxClients int
	// Resources is the initial number of resources (default 10 for the
	// rebalancer, 3 for elections and locks; the queue workload has none
	// and ignores these), kept within [MinResources,
	// MaxResources] (default [Resources/2 (at least MaxClients for the
	// rebalancer), Resources*3/2]).
	Resources, MinResources, MaxResources int

	// SessionTimeout asked for by the clients (default 4s); LostAfter is
	// their self-expiry fraction (default zkcoord.DefaultLostAfter).
	SessionTimeout time.Duration
	LostAfter      float64
	// UseInterval is the time between two uses of a resource by its owner
	// (default 100ms).
	UseInterval time.Duration

	// ConvergeTimeout bounds the wait for convergence after each fault
	// (default 2 minutes). Stable is how long a converged rebalancer must
	// stay unchanged to count as converged (default 1s). Settle is how
	// long the final state must hold after the last fault (default 5s).
	ConvergeTimeout, Stable, Settle time.Duration

	// Bug, if set, is given to the clients named in BugClients (default:
	// the first client).
	Bug        string
	BugClients []string

	// LockDelay is the lock-delay of the clients' locks, elections and
	// rebalancers (lock.WithLockDelay, election.WithLockDelay; lock,
	// election and recovery workloads; rebalance.WithLockDelay, applied to
	// the barriers' takeovers: the rebalance workloads); default none.
	LockDelay time.Duration
	// Unfenced judges the run as if the resources did not check fencing
	// tokens: every overlap of two holders is a violation, also one whose
	// earlier holder was paused and refused by the service. With long
	// pauses only a lock-delay longer than the pauses passes it.
	Unfenced bool

	// Zkcoord is the zkcoord binary the cli workload runs; empty means
	// build it (with the go command, from the module the harness is in,
	// with the zkcoord_broken tag when Bug is set). A binary given here
	// needs that tag for Bug to take effect.
	Zkcoord string

	// Spawn returns how to start a child process (role "client", "service"
	// or "use", see ChildMain) named name. Required.
	Spawn func(name, role string, args []string) launch.Spec
	// Dir receives the clients' logs; default: a temporary directory,
	// removed at the end.
	Dir string
	// Log receives progress lines; nil means silent.
	Log io.Writer
}

func (o *Options) setDefaults() error {
	if _, err := ParseWorkload(string(o.Workload)); err != nil {
		return err
	}
	if o.Duration <= 0 && len(o.Faults) == 0 {
		return fmt.Errorf("%w: neither Duration nor Faults", ErrInvalidOptions)
	}
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defD := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	if o.Workload == CLI {
		def(&o.Clients, 6) // two of each command
		def(&o.Resources, 6)
	}
	def(&o.Clients, 4)
	def(&o.MinClients, min(2, o.Clients))
	def(&o.MaxClients, o.Clients+2)
	if o.Workload == Queue || o.Workload == Counter || o.Workload == Discovery { // one queue, one set of nodes or one service; no resource added or removed
		o.Resources, o.MinResources, o.MaxResources = 1, 1, 1
	}
	if o.Workload.rebalance() {
		def(&o.Resources, 10)
		def(&o.MinResources, max(o.Resources/2, o.MaxClients))
	} else {
		def(&o.Resources, 3)
		def(&o.MinResources, max(1, o.Resources/2))
	}
	def(&o.MaxResources, max(o.Resources*3/2, o.Resources+1))
	defD(&o.SessionTimeout, 4*time.Second)
	if o.LostAfter == 0 {
		o.LostAfter = 2.0 / 3.0
	}
	defD(&o.UseInterval, 100*time.Millisecond)
	defD(&o.ConvergeTimeout, 2*time.Minute)
	defD(&o.Stable, time.Second)
	defD(&o.Settle, 5*time.Second)
	switch {
	case o.Clients < 1 || o.MinClients < 1 || o.MinClients > o.Clients || o.MaxClients < o.Clients:
		return fmt.Errorf("%w: clients %d in [%d, %d]", ErrInvalidOptions, o.Clients, o.MinClients, o.MaxClients)
	case o.Resources < 1 || o.MinResources < 1 || o.MinResources > o.Resources || o.MaxResources < o.Resources:
		return fmt.Errorf("%w: resources %d in [%d, %d]", ErrInvalidOptions, o.Resources, o.MinResources, o.MaxResources)
	case !(o.LostAfter > 0.3 && o.LostAfter < 0.9):
		return fmt.Errorf("%w: LostAfter %v out of (0.3, 0.9)", ErrInvalidOptions, o.LostAfter)
	case o.Bug != "" && o.Bug != BugLateStop && o.Workload != CLI && o.Workload != Queue && o.Workload != Counter,
		o.Workload == CLI && o.Bug != "" && !slices.Contains([]string{BugGrace, BugPdeathsig, BugGroupKill, BugMixedKinds}, o.Bug),
		o.Workload == Queue && o.Bug != "" && o.Bug != BugAckFirst && o.Bug != BugClaimCallerCtx,
		o.Workload == Counter && o.Bug != "" && o.Bug != BugValueSettle:
		return fmt.Errorf("%w: unknown bug %q for workload %s", ErrInvalidOptions, o.Bug, o.Workload)
	}
	if o.Bug != "" && len(o.BugClients) == 0 {
		o.BugClients = []string{clientName(1)}
		if o.Workload == CLI || o.Workload == Counter { // the bug is in the library: every client has it
			for i := 2; i <= o.Clients; i++ {
				o.BugClients = append(o.BugClients, clientName(i))
			}
		}
	}
	return nil
}

func (o *Options) limits() Limits {
	return Limits{SessionTimeout: o.SessionTimeout, LostAfter: o.LostAfter,
		Clients: o.Clients, MinClients: o.MinClients, MaxClients: o.MaxClients,
		Resources: o.Resources, MinResources: o.MinResources, MaxResources: o.MaxResources}
}

func clientName(i int) string   { return fmt.Sprintf("c%d", i) }
func resourceName(i int) string { return fmt.Sprintf("r%02d", i) }
