// Package chaos tries to break zkcoord, in the spirit of Jepsen: it runs
// real client processes against a real ZooKeeper ensemble, injects faults
// from a seeded, reproducible schedule, records what every process did on
// one clock, and checks the history.
//
// # The machine
//
// Run starts, against a 3-server ensemble (StartCluster, or zktest.Start in
// a test):
//
//   - a fenced resource service, a process of its own, that clients "use"
//     while they own a resource. Every use is a request over a Unix socket
//     carrying the client, the resource and the fencing token; the service
//     refuses a token older than the newest it has seen for the resource
//     and records every decision (internal/tool/oracle events, stamped with
//     CLOCK_MONOTONIC, which all processes of the machine share);
//   - K client processes of one Workload, each behind its own fault proxy:
//     rebalancer clients in one of the three modes (using every resource
//     assigned to them), candidates in one election per resource (using
//     the resource while they lead, resigning now and then), or lock
//     contenders (one Mutex per resource, held briefly, over and over).
//     Clients record Acquire just before their first use and Release just
//     after their last, so a recorded holding contains every use. In the
//     cli workload the clients are the zkcoord binary itself (lock, elect,
//     rebalance --exec), whose command uses the resource from a grandchild
//     process that the service records holdings for (see cli.go). In the
//     recovery workload the clients are lock contenders and candidates
//     again, each resource's loop running under zkcoord.Supervise. In the
//     queue workload they are consumers of one queue.WorkQueue that the
//     harness fills with numbered items: each claims a batch of one to
//     four items, every other time with a deadline that often expires
//     mid-claim, and processes each item (uses it through the service,
//     the claim node's czxid as the token) and acknowledges it (see
//     client_queue.go, queue.go). In the counter workload they are writers, in staggered rounds, of one shared
//     counter.Counter (Add), of a config node per round that every writer
//     creates with the same bytes, and of a JSON list in a config node that
//     each appends its own id to (see client_counter.go, counter.go). In the
//     discovery workload each registers a discovery instance and replaces
//     it (unregister, register) in bursts that every client makes at about
//     the same time, while a discovery.Provider of its own reports what it
//     serves (see client_discovery.go, discovery.go);
//   - M resources.
//
// Children are the caller's own binary started again (Options.Spawn, and
// ChildMain in the child): the chaos command starts "chaos client ..." and
// "chaos service ...", a test re-executes the test binary.
//
// # Faults
//
// A Planner draws the schedule from the seed (Plan prints it): SIGKILL and
// restart of clients; SIGSTOP/SIGCONT of clients shorter than their
// self-expiry limit, between it and the session timeout, and longer than
// the session timeout; client-to-ZooKeeper partitions of the same three
// lengths (the client's proxy drops all traffic); kill and restart of the
// ZooKeeper leader and of a follower; pause of a server; resources added
// and removed; clients added and removed; and storms, several client faults
// on distinct clients overlapping in time. Faults run one episode at a
// time: after each, the harness waits until the group has converged and
// measures how long that took.
//
// # Checkers
//
//   - No Double Resource Access (oracle History.CheckFenced): no instant at
//     which two clients held a resource, except where the earlier holder's
//     process was paused past its session and the service accepted none of
//     its uses meanwhile: fencing at work, the only protection a process
//     that is not running can have. Refused stale uses are counted.
//   - Convergence: after each fault, and after the last one for the settle
//     time, every resource is held by exactly one live client and the
//     holdings are balanced (rebalancer), every election has one leader
//     (election), every lock is granted again and every client gets one
//     (lock and recovery), every item put before the fault acknowledged
//     and every consumer taking items again (queue), and at the end the
//     queue empty; every writer doing a whole round of writes again
//     (counter).
//   - Queue delivery (checkQueue): every item put is processed at least
//     once and acknowledged exactly once, and only by a consumer that had
//     processed it; nothing is processed that was not put.
//   - Counter and config writes (checkCounter), at the end: the count lies
//     between the increments acknowledged and those plus the ones whose
//     outcome was unknown (reported so, or cut short by the writer's
//     death); no round's node was reported created by two writers, or
//     exists with no create that may have made it; every acknowledged
//     update of the list is in it, exactly once, and nothing else is.
//   - Discovery (checkDiscovery): no incarnation of an instance served
//     that was never registered, or later than a session timeout after it
//     was certainly gone; none certainly registered and not served by a
//     connected provider for longer than a session timeout (counted from
//     the provider's last reconnection or pause as well).
//   - Liveness of the processes: a client that exits on its own is a
//     problem (and is restarted so the run goes on).
//
// Options.Bug gives clients a known broken behaviour back (the Bug
// constants), to show that the checkers catch it. Most are in the client;
// those of the cli workload are in zkcoord itself, compiled in only with
// the zkcoord_broken tag. With BugMixedKinds the first lock client of the
// cli workload takes the read side of a read/write lock where the others
// take a mutex, on the same paths: a zkcoord that ignores other kinds of
// lock lets a reader hold beside a writer, a double access; a fixed one
// refuses the kind that comes second.
//
// The Report holds a one-line verdict, the measurements, and the whole
// history (WriteJSON); WriteTimeline draws it as an HTML page with one row
// per resource, one color per client and every fault marked.
//
// # Concurrency
//
// Run drives one run from the calling goroutine; several runs may share an
// ensemble. Reports are plain values.
package chaos
