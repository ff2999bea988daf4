// Package zktest runs real Apache ZooKeeper servers for tests and breaks them
// on purpose.
//
// The servers come from package zkserver, which has no test dependencies and
// suits programs that only need servers. zktest adds what tests need: Start
// and Main, which tie a cluster to a test or a test binary, fault proxies,
// and a goroutine-leak check.
//
// Launch is the core: it starts a standalone server, or an ensemble of 3 or
// 5, from the ZooKeeper jars installed on the machine (Debian package
// zookeeper, run by java from $PATH or $JAVA_HOME), on free loopback ports
// with fresh data directories, waits until the servers serve clients, and
// returns an error (wrapping ErrNoZooKeeper when Java or ZooKeeper is
// missing). Programs call it and Close the cluster when done.
//
// Start is Launch for a test: it registers a cleanup that closes the
// cluster; when the test has failed, the cleanup first logs the last lines
// of every server log. If Java or ZooKeeper is missing the test is skipped,
// or fails when the environment variable CI is "true".
//
//	func TestSomething(t *testing.T) {
//		c := zktest.Start(t, zktest.WithServers(3))
//		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
//		defer cancel()
//		sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: c.Servers()})
//		if err != nil {
//			t.Fatal(err)
//		}
//		defer sess.Close(ctx)
//
//		leader, err := c.Leader()
//		if err != nil {
//			t.Fatal(err)
//		}
//		c.Server(leader).Kill()   // or Stop, Pause/Resume
//		if err := c.WaitReady(ctx); err != nil { // a new leader serves
//			t.Fatal(err)
//		}
//		c.Server(leader).Start() // rejoins on the same ports and data
//	}
//
// Faults between one client and the servers come from a Proxy, an in-process
// TCP proxy written on the standard library, with one listener per server
// (NewProxy in tests, OpenProxy in programs). Give the client the proxy's
// addresses:
//
//	p := c.NewProxy(t)
//	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: p.Servers()})
//	...
//	p.Blackhole() // bytes stop flowing both ways, connections stay open
//	p.Cut()       // connections close, new ones are refused
//	p.Delay(200 * time.Millisecond)
//	p.ResetPeer() // connections are reset when they next carry data
//	p.Heal()
//
// Delay counts to the microsecond: a round trip through the proxy takes at
// least twice the delay, and at 0.25 ms or 1 ms a median of some 0.16 ms
// more on two busy Linux cores (BenchmarkProxyDelay; most of it is the
// kernel's wake-up latency after a sleep). Close waits for the proxy's
// goroutines, so Main's leak check counts them like any other.
//
// Besides zkcoord's own packages, zktest needs only goleak and the standard
// library: a test that imports it adds two modules to its go.mod, zkcoord
// and goleak.
//
// Faults between servers come from PeerLinks, a Proxy on each link from one
// server to another's quorum port. Blackholing the link from a follower to
// the leader cuts the follower off while its clients still reach it:
//
//	links := zktest.NewPeerLinks()
//	c := zktest.Start(t, zktest.WithServers(3), links.Option())
//	t.Cleanup(links.Close)
//	leader, _ := c.Leader()
//	links.Link((leader+1)%3, leader).Blackhole()
//
// Cluster.ExpireSession makes the server expire a client's session (its
// ephemeral nodes go away and the client is told its session expired when it
// reconnects). It needs the session's id and password: a zkcoord Session
// gives them (Session.ID, Session.Password); for a client that does not
// expose its password, a SessionRecorder passed as its dialer records it:
//
//	rec := zktest.NewSessionRecorder(nil)
//	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: c.Servers(), Dialer: rec.Dial})
//	...
//	id, passwd := rec.Session()
//	err = c.ExpireSession(ctx, id, passwd)
//
// WithTLS adds a TLS client port to every server, with a certificate from a
// throwaway CA; dial Cluster.SecureServers with Cluster.ClientTLSConfig.
//
// WithReconfig starts an ensemble with dynamic reconfiguration; AddServer
// starts a server and adds it, RemoveServer removes a server and stops it,
// and a Session authenticated as SuperAuth may call Reconfig itself.
//
// WithSASLDigest starts servers that authenticate clients with SASL
// DIGEST-MD5 against a map of users and passwords. StartKDC starts a
// throwaway MIT Kerberos realm (KDCRealm, on a loopback port; Debian
// packages krb5-kdc and krb5-admin-server), whose AddPrincipal makes
// principals and keytabs; WithKerberos(kdc) starts servers that
// authenticate clients against it as KerberosServerPrincipal. Without the
// KDC programs StartKDC skips the test, or fails it when CI is "true".
//
// Server also reads the four-letter-word commands (srvr, mntr, cons, wchc)
// that tests use to look at server state, such as the number of watches.
//
// The servers run with tickTime DefaultTickTime (WithTickTime changes it),
// accept session timeouts from two ticks up to MaxSessionTimeout, and skip
// fsync, so they start in about a second and are fit for tests only.
//
// A standalone ZooKeeper 3.8.0 server that restarts can leave a client that
// connects in its first moments hanging; see WithQuorumMode.
//
// How server processes are cleaned up on each platform, and what Pause needs,
// is described in package zkserver.
//
// Everything here is safe for concurrent use, and several clusters may run at
// once, in one test binary or in several.
package zktest
