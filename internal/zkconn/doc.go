// Package zkconn is zkcoord's own ZooKeeper client connection: one
// session, kept over a succession of TCP connections, on top of the
// records and frames of internal/wire.
package zkconn
