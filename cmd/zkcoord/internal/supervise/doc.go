// Package supervise runs the commands zkcoord runs on behalf of its user
// (under a lock, while leading an election, for a resource) so that none of
// their processes outlives what they run under.
//
// A [Child] runs in a process group of its own. [Child.Stop] stops it with
// SIGTERM to its processes and, after a grace period, SIGKILL, and returns
// only once they are all gone; whatever the grace period, they are killed a
// safety margin before the server may expire the child's session, and at
// once when someone else may already own what they work on ([LossGrace]).
//
// A child's processes are the command and every process it starts: on Linux
// also those that leave its process group or session (setsid, setpgid, a
// double fork, a daemonizing wrapper); on other Unix systems those of its
// process group only; on Windows those of its job object. Whatever the
// command leaves running when it exits is killed (SIGKILL), and the child
// counts as exited ([Child.Done]) only once all of them are gone.
//
// They die with the program that started them, also when it is killed with
// SIGKILL: on Unix the command is started through a small shim (the
// program itself, re-executed: its main must call [RunShimIfAsked] first)
// that kills them as soon as the program is gone, so that grandchildren
// started through a shell or a wrapper script do not outlive it. On Linux
// the shim is a child subreaper: every orphan of the command's tree becomes
// its child, and it kills every process below it, scanning /proc again
// until it finds none left, and exits only once it has reaped them all. On
// Windows a job object that the program alone holds does that. Out of
// reach: a process the program may not signal (a setuid program running as
// another user), and, if the shim alone is killed, a process that left the
// command's group.
//
// In a build with the zkcoord_broken tag only, the environment variable
// ZKCOORD_TEST_BROKEN restores known broken behaviours for the chaos
// harness (see broken_on.go); every shipped build ignores it.
package supervise
