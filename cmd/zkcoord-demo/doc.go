// Command zkcoord-demo plays the demo of zkcoord: "zkcoord demo" runs it,
// found next to zkcoord or on the PATH, and "make demo" builds both into
// bin/ and plays it. It is a program of its own so that zkcoord links
// neither the launcher of the demo's ZooKeeper server nor the oracle that
// checks the demo's verdict.
//
// Usage:
//
//	zkcoord demo [--zk SERVERS] [--workers N] [--resources N] [--plain] [--ui ADDR]
//
// The demo starts worker processes running "zkcoord rebalance --exec" on a
// ZooKeeper server of its own (or on the servers of --zk), breaks things on
// purpose while they share resources, and ends with the verdict of an
// oracle that checked that no resource ever ran twice at once: exit status
// 0 for PASS, 1 for FAIL, 2 for a usage error. "zkcoord demo --help" says
// the rest.
//
// The workers run the zkcoord program that ran the demo (zkcoord demo
// passes its own path with the hidden flag --zkcoord PATH); run directly,
// zkcoord-demo runs the zkcoord next to it, or else on the PATH.
package main
