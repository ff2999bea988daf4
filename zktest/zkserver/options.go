package zkserver

import "time"

// Option configures Launch.
type Option func(*options)

type options struct {
	servers  int
	tickTime time.Duration
	tls      bool
	quorum   bool
	fsync    bool
	reconfig bool
	logf     func(format string, args ...any)
	peerAddr func(from, to int, addr string) (string, error)

	saslUsers map[string]string // WithSASLDigest
	kdc       *KDC              // WithKerberos
}

// WithServers sets the number of servers: 1 (standalone, the default), 3 or 5
// (an ensemble).
func WithServers(n int) Option {
	return func(o *options) { o.servers = n }
}

// WithQuorumMode runs a single server (WithServers(1), the default) through
// ZooKeeper's quorum code path, as a one-member ensemble
// (standaloneEnabled=false), instead of standalone mode; it then reports Mode
// "leader". Ensembles always run this way.
//
// Use it for tests that restart a single server while clients keep trying to
// reconnect. A ZooKeeper 3.8.0 standalone server opens its client port before
// it has created its database, and a client whose connect request arrives in
// that short window is neither answered nor disconnected (the server hits a
// NullPointerException while closing it and leaks the socket):
// go-zookeeper then waits about 6.7 times the session timeout before it
// gives up on that connection, usually losing the session. In quorum mode
// the database is loaded before the client port opens, so there is no such
// window.
func WithQuorumMode() Option {
	return func(o *options) { o.quorum = true }
}

// WithTickTime sets the ZooKeeper tickTime (default DefaultTickTime). The
// smallest session timeout the servers accept is two ticks, the largest is
// MaxSessionTimeout. It is rounded to whole milliseconds.
func WithTickTime(d time.Duration) Option {
	return func(o *options) { o.tickTime = d }
}

// WithTLS additionally opens a TLS client port on every server (see
// Cluster.SecureServers and Cluster.ClientTLSConfig). It switches the servers
// to the Netty connection factory; the plain client ports keep working.
func WithTLS() Option {
	return func(o *options) { o.tls = true }
}

// WithFsync makes the servers sync their transaction log to disk before
// they acknowledge a write (forceSync=yes), as production servers do. By
// default they skip it, which makes writes cheaper than in production.
func WithFsync() Option {
	return func(o *options) { o.fsync = true }
}

// WithLogf receives Launch's progress notes, such as a start attempt retried
// after a port conflict. Without it they are dropped.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(o *options) { o.logf = logf }
}

// WithPeerAddr makes server from reach the quorum port of server to
// (addr, "127.0.0.1:port") at the address f returns instead: the link a
// follower keeps to its leader, through a fault proxy for example (see
// zktest.PeerLinks). f is called for every ordered pair of servers while
// their configurations are written, again on a start retried with new
// ports. Leader election keeps its direct links, so a server cut off this
// way still learns who leads but cannot follow it.
func WithPeerAddr(f func(from, to int, addr string) (string, error)) Option {
	return func(o *options) { o.peerAddr = f }
}
