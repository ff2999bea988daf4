// Package oracle records what clients of a rebalancer did, from many OS
// processes, and checks the rebalancer's two invariants on that history:
//
//  1. No Double Resource Access: at no instant do two clients hold the same
//     resource ([History.CheckExclusive], and [History.CheckFenced] for runs
//     that pause processes on purpose).
//  2. All Resources Evenly Accessed: once the group is quiet, every resource
//     is held by exactly one live client and holdings differ in size by at
//     most one ([History.Holdings] and [CheckBalanced]).
//
// # Time
//
// Every [event.Event] carries a CLOCK_MONOTONIC time in nanoseconds
// ([event.Now]). On Linux that clock is shared by all processes of the
// machine, so events
// recorded by different processes order correctly. Clients must record
// conservatively, so that a recorded holding always contains the real one:
// "acquire" just before the first use (after the barrier exists), "release"
// just after the last use (before the barrier is deleted). The harness
// records "crash" only after the killed process is known to be gone, which
// ends every holding of that client.
//
// # Transport
//
// A client process writes events as lines on its standard output with an
// [event.Emitter]; the harness feeds every output line of that process to
// [History.Sink], which parses event lines ([event.ParseLine]) and passes
// the other lines on. An event line is [event.LinePrefix] followed by the
// event in JSON.
//
// Each process's output is read on its own, so in the middle of a run the
// history may hold one process's latest events and lack another's earlier
// ones. To check mid-run, the harness notes a time t, asks every live
// process to answer with [event.Emitter.WriteLine] (which follows every
// event the process stamped before it), waits for the answers, and checks
// [History.Before](t). Once every process has exited, the whole history is
// complete.
//
// # Concurrency
//
// History, Emitter and Fenced are safe for concurrent use.
package oracle
