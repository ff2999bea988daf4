package zktest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/zktest/zkserver"
)

// The server side of a Cluster, from package zkserver.
type (
	// Option configures Start and Launch.
	Option = zkserver.Option
	// Server is one ZooKeeper server process of a Cluster.
	Server = zkserver.Server
	// SessionRecorder records the session id and password a client is
	// given, for Cluster.ExpireSession.
	SessionRecorder = zkserver.SessionRecorder
)

const (
	// DefaultTickTime is the ZooKeeper tickTime used unless WithTickTime is given.
	DefaultTickTime = zkserver.DefaultTickTime
	// MaxSessionTimeout is the largest session timeout the servers accept.
	MaxSessionTimeout = zkserver.MaxSessionTimeout
	// EnvClasspath, when set, replaces the whole Java class path used to run
	// ZooKeeper (QuorumPeerMain must be on it).
	EnvClasspath = zkserver.EnvClasspath
	// EnvJava, when set, is the java executable to use. Otherwise
	// $JAVA_HOME/bin/java or java from $PATH is used.
	EnvJava = zkserver.EnvJava
)

var (
	// ErrNoZooKeeper is wrapped by Launch when Java or the ZooKeeper jars
	// cannot be found; Start then skips the test, or fails it under CI.
	ErrNoZooKeeper = zkserver.ErrNoZooKeeper
	// ErrSessionGone is returned by ExpireSession when the session does
	// not exist or the password is wrong.
	ErrSessionGone = zkserver.ErrSessionGone
	// ErrNotServing is returned (wrapped) by the four-letter-word helpers
	// when the server is not currently serving requests.
	ErrNotServing = zkserver.ErrNotServing
)

// WithServers sets the number of servers: 1 (standalone, the default), 3 or 5
// (an ensemble).
func WithServers(n int) Option { return zkserver.WithServers(n) }

// WithQuorumMode runs a single server as a one-member ensemble; see
// zkserver.WithQuorumMode.
func WithQuorumMode() Option { return zkserver.WithQuorumMode() }

// WithTickTime sets the ZooKeeper tickTime (default DefaultTickTime).
func WithTickTime(d time.Duration) Option { return zkserver.WithTickTime(d) }

// WithTLS additionally opens a TLS client port on every server; see
// zkserver.WithTLS.
func WithTLS() Option { return zkserver.WithTLS() }

// WithFsync makes the servers sync their log before acknowledging a write;
// see zkserver.WithFsync.
func WithFsync() Option { return zkserver.WithFsync() }

// WithLogf receives progress notes of the start, such as a retry after a
// port conflict. Start sends them to the test's log.
func WithLogf(logf func(format string, args ...any)) Option { return zkserver.WithLogf(logf) }

// NewSessionRecorder returns a recorder whose Dial uses dial to open
// connections (nil means net.DialTimeout); see zkserver.NewSessionRecorder.
func NewSessionRecorder(dial func(network, address string, timeout time.Duration) (net.Conn, error)) *SessionRecorder {
	return zkserver.NewSessionRecorder(dial)
}

// Cluster is a set of running ZooKeeper servers (a zkserver.Cluster, whose
// methods it has) together with the fault proxies opened in front of them.
// Its methods are safe for concurrent use.
type Cluster struct {
	*zkserver.Cluster

	mu      sync.Mutex
	closed  bool
	proxies []*Proxy
}

// Launch starts a cluster as zkserver.Launch does and returns an error
// instead of failing a test, for programs (a fault-injection run, a
// benchmark driver) and for TestMain. Close it when done: it closes its
// proxies, kills every server process and removes its files.
func Launch(opts ...Option) (*Cluster, error) {
	zc, err := zkserver.Launch(opts...)
	if err != nil {
		return nil, err
	}
	return &Cluster{Cluster: zc}, nil
}

// Start starts a cluster with Launch for the test tb and registers a cleanup
// that closes it; when the test has failed by then, the cleanup first logs
// the tail of each server's log. Progress notes go to tb.Logf.
//
// When Java or the ZooKeeper jars cannot be found, Start skips the test, or
// fails it when the environment variable CI is "true"; any other failure to
// start fails the test. Start must be called from the goroutine running the
// test.
func Start(tb testing.TB, opts ...Option) *Cluster {
	tb.Helper()
	c, err := Launch(append([]Option{WithLogf(tb.Logf)}, opts...)...)
	if err != nil {
		failStart(tb, err)
		return nil
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			c.logTails(tb.Logf, "test failed")
		}
		c.Close()
	})
	return c
}

// failStart ends the test after Launch failed: a skip for a machine without
// ZooKeeper, unless CI=true.
func failStart(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrNoZooKeeper) {
		if ciStrict() {
			tb.Fatalf("zktest: %v (CI=true, so this is fatal)", err)
		}
		tb.Skipf("zktest: skipping: %v", err)
	}
	tb.Fatalf("zktest: %v", err)
}

// ciStrict reports whether a missing ZooKeeper is a failure rather than a
// reason to skip.
func ciStrict() bool { return os.Getenv("CI") == "true" }

// Close closes the cluster's proxies, kills every server process and
// removes the cluster's files. It is idempotent.
func (c *Cluster) Close() {
	c.mu.Lock()
	c.closed = true
	proxies := c.proxies
	c.proxies = nil
	c.mu.Unlock()
	for _, p := range proxies {
		p.Close()
	}
	c.Cluster.Close()
}

// logTailLines is how many lines of each server log are logged when a test
// fails.
const logTailLines = 100

// logTails logs the last lines of every server's log.
func (c *Cluster) logTails(logf func(format string, args ...any), reason string) {
	for i := range c.Len() {
		s := c.Server(i)
		tail, err := s.LogTail(logTailLines)
		if err != nil {
			logf("zktest: %s: server %d (%s): reading log: %v", reason, i, s.Addr(), err)
			continue
		}
		logf("zktest: %s: last %d lines of server %d (%s) log %s:\n%s",
			reason, logTailLines, i, s.Addr(), s.LogPath(), tail)
	}
}

// stderrf writes a line to standard error, for Main, which has no test log.
func stderrf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
