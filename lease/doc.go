// Package lease implements a time-bounded lease that never blocks,
// compatible with Kazoo's NonBlockingLease: whoever asks while nobody holds
// an unexpired lease gets it for a duration; the holder renews it by asking
// again with the same id; everyone else is told who holds it until when.
//
// A lease is a promise in wall-clock time, not an ownership tied to a
// Session: it outlives its holder's process and Session, and it is only as
// good as the clocks of the clients that share it (they must agree to well
// within the duration). Use it for "run this job on one host per hour",
// not for mutual exclusion under partitions: for that take a lock.Mutex,
// whose lease ends with its Session and carries a fencing token.
//
// # Layout
//
// Kazoo's layout: the node <path>/lease_holder holds JSON
//
//	{"version": 1, "holder": "<id>", "end": "2006-01-02T15:04:05"}
//
// with the end in UTC, to the second. Kazoo takes a lock under <path>
// around its read-then-replace; this package needs none, because it
// replaces the holder node in one transaction that checks the version it
// read (delete at that version, then create), so two clients can never
// both replace the same expired lease. A Kazoo client racing with it fails
// its create with NodeExists instead of granting a second lease.
//
// The holder id is, by default, one per process (host name, pid and a
// random suffix), so that two processes on one host never both hold the
// lease; Kazoo's default is the host name, which two Kazoo processes on
// one host share. Give WithID a stable id of your own to renew a lease
// across restarts, and make sure no two holders use it at once.
//
// # Lost replies
//
// A create or replace whose reply is lost is settled by
// zkcoord.Settle. A holder node with exactly the record this call
// wrote is no proof that the write was its own (another call with the
// same id may write the same bytes in the same second), so TryAcquire reads
// again and renews a lease held under its id with a write of its own:
// Obtained is reported only on a write that surely happened. When ctx or
// the Session ends with a write in flight, TryAcquire fails with an error
// wrapping zkcoord.ErrOutcomeUnknown: the lease may be held under its id,
// and asking again with the same id renews it.
//
// Data that is not this JSON, or a version other than 1, is never
// overwritten: TryAcquire fails with an error wrapping zkcoord.ErrBadData,
// or (for another version, as Kazoo does) reports the lease as not
// obtained.
package lease
