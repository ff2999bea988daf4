// Package cli is what the zkcoord programs (zkcoord, and zkcoord-demo,
// which plays "zkcoord demo") share, so that they look and behave as one
// command: the exit codes, the connection, logging and metrics flags with
// their environment variables, connecting to ZooKeeper with messages an
// operator can act on, the layout of a command's help and of its usage
// errors, and serving the web console.
package cli
