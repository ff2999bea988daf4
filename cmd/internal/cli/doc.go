// Package cli is what the zkcoord programs (zkcoord, and zkcoord-demo,
// which plays "zkcoord demo") share, so that they look and behave as one
// command: the exit codes, the connection, logging and metrics flags with
// their environment variables, connecting to ZooKeeper with messages an
// operator can act on, the layout of a command's help and of its usage
// errors, one "zkcoord: " prefix on every error message (Message), and
// serving the web console. A chroot must exist: the programs never create
// it unasked.
package cli
