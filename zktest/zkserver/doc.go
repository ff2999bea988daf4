// Package zkserver runs real Apache ZooKeeper servers on loopback ports, for
// programs (a demo, a benchmark driver, a fault-injection run) and for test
// kits. It needs nothing but the standard library; package zktest builds the
// test-facing API (Start, Main, fault proxies) on it.
//
// Launch starts a standalone server, or an ensemble of 3 or 5, from the
// ZooKeeper jars installed on the machine (Debian package zookeeper, run by
// java from $PATH or $JAVA_HOME), on free loopback ports with data
// directories in a new temporary directory, and waits until the servers
// serve clients. When Java or ZooKeeper is missing its error wraps
// ErrNoZooKeeper. Close kills every process and removes the directory:
//
//	c, err := zkserver.Launch(zkserver.WithServers(3))
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	conn, _, err := zk.Connect(c.Servers(), 10*time.Second)
//	...
//	leader, err := c.Leader()
//	...
//	c.Server(leader).Kill()   // or Stop, Pause/Resume
//	err = c.WaitReady(ctx)    // a new leader serves
//	c.Server(leader).Start()  // rejoins on the same ports and data
//
// Cluster.ExpireSession makes the server expire a client's session (its
// ephemeral nodes go away and the client is told its session expired when it
// reconnects). It needs the session password, which go-zookeeper does not
// expose; a SessionRecorder passed as the client's dialer records it:
//
//	rec := zkserver.NewSessionRecorder(nil)
//	conn, _, err := zk.Connect(c.Servers(), 10*time.Second, zk.WithDialer(rec.Dial))
//	...
//	id, passwd := rec.Session()
//	err = c.ExpireSession(ctx, id, passwd)
//
// WithTLS adds a TLS client port to every server, with a certificate from a
// throwaway CA; dial Cluster.SecureServers with Cluster.ClientTLSConfig.
//
// WithReconfig starts an ensemble with dynamic reconfiguration and a super
// user (SuperAuth); AddServer starts a server and adds it, RemoveServer
// removes one and stops it, Reconfig sends any incremental change.
//
// WithSASLDigest and WithKerberos make the servers authenticate clients
// with SASL: DIGEST-MD5 against a map of users, or Kerberos against a KDC
// from LaunchKDC, a throwaway MIT Kerberos realm on a loopback port.
//
// OpenProxy starts a fault-injecting TCP proxy in front of servers (zktest
// opens one in front of a test's cluster): Blackhole, Cut, Delay and
// ResetPeer break the connections through it, Heal mends them.
//
// Server also reads the four-letter-word commands (srvr, mntr, cons, wchc)
// that tests use to look at server state, such as the number of watches.
//
// The servers run with tickTime DefaultTickTime (WithTickTime changes it),
// accept session timeouts from two ticks up to MaxSessionTimeout, and skip
// fsync (unless WithFsync), so they start in about a second and are fit for
// tests and demos only.
//
// A standalone ZooKeeper 3.8.0 server that restarts can leave a client that
// connects in its first moments hanging; see WithQuorumMode.
//
// # Processes
//
// On Linux every server gets a parent-death signal, so it dies with the
// program even when the program is killed outright. Elsewhere Close kills
// the servers, and they stay in the program's process group so that an
// interrupt from the terminal reaches them too; a program killed with
// SIGKILL leaves them running. Pause and Resume need SIGSTOP and SIGCONT and
// fail on Windows, where Stop kills the process.
//
// Everything here is safe for concurrent use, and several clusters may run at
// once, in one program or in several.
package zkserver
