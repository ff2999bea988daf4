package zkserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// DefaultTickTime is the ZooKeeper tickTime used unless WithTickTime is given.
	DefaultTickTime = 100 * time.Millisecond

	// MaxSessionTimeout is the largest session timeout the servers accept.
	MaxSessionTimeout = 60 * time.Second

	// startTimeout bounds how long one start attempt of a cluster may take.
	startTimeout = 60 * time.Second
	// startAttempts is how often Launch retries with fresh ports when a port
	// turned out to be taken by someone else.
	startAttempts = 3
)

// Environment variables understood by Launch.
const (
	// EnvClasspath, when set, replaces the whole Java class path used to run
	// ZooKeeper (QuorumPeerMain must be on it).
	EnvClasspath = "ZKTEST_CLASSPATH"
	// EnvJava, when set, is the java executable to use. Otherwise
	// $JAVA_HOME/bin/java or java from $PATH is used.
	EnvJava = "ZKTEST_JAVA"
)

// javaLibDir is where Debian installs the ZooKeeper, slf4j and netty jars.
const javaLibDir = "/usr/share/java"

// ErrNoZooKeeper is wrapped by Launch when Java or the ZooKeeper jars cannot
// be found on this machine.
var ErrNoZooKeeper = errors.New("zkserver: ZooKeeper is not usable on this machine")

// Cluster is a set of running ZooKeeper server processes started by Launch.
// Its methods are safe for concurrent use.
type Cluster struct {
	dir      string
	opts     options
	tickTime time.Duration
	servers  []*Server
	launcher *launcher
	tls      *tlsMaterial
	jvmArgs  []string // options of every server's java (SASL's)
	logf     func(format string, args ...any)

	mu     sync.Mutex
	closed bool
}

// Launch starts a standalone ZooKeeper server, or an ensemble when
// WithServers(3) or WithServers(5) is given, on free loopback ports with
// fresh data directories in a new temporary directory, and waits until it
// serves clients (a leader is elected). Close the cluster when done: it kills
// every server process and removes the directory.
//
// When Java or the ZooKeeper jars cannot be found, the error wraps
// ErrNoZooKeeper. Nothing is left running when Launch fails.
func Launch(opts ...Option) (*Cluster, error) {
	o := options{servers: 1, tickTime: DefaultTickTime}
	for _, opt := range opts {
		opt(&o)
	}
	switch o.servers {
	case 1, 3, 5:
	default:
		return nil, fmt.Errorf("zkserver: WithServers(%d): want 1, 3 or 5", o.servers)
	}
	o.tickTime = o.tickTime.Round(time.Millisecond)
	if o.tickTime <= 0 {
		return nil, fmt.Errorf("zkserver: WithTickTime(%v): must be at least 1ms", o.tickTime)
	}
	if o.logf == nil {
		o.logf = func(string, ...any) {}
	}

	java, classpath, err := findZooKeeper(o.tls)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoZooKeeper, err)
	}
	dir, err := os.MkdirTemp("", "zkserver-")
	if err != nil {
		return nil, fmt.Errorf("zkserver: %w", err)
	}
	c := &Cluster{
		dir:      dir,
		opts:     o,
		tickTime: o.tickTime,
		launcher: newLauncher(),
		logf:     o.logf,
	}
	if o.tls {
		c.tls, err = newTLSMaterial(c.dir)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("zkserver: generating TLS material: %w", err)
		}
	}
	if c.jvmArgs, err = saslSetup(c.dir, o); err != nil {
		c.Close()
		return nil, fmt.Errorf("zkserver: configuring SASL: %w", err)
	}

	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		lastErr = c.startAttempt(java, classpath, o, attempt)
		if lastErr == nil {
			return c, nil
		}
		retry := errors.Is(lastErr, errPortInUse)
		c.killAll()
		if !retry {
			break
		}
		c.logf("zkserver: start attempt %d hit a port conflict, retrying with new ports: %v", attempt, lastErr)
	}
	err = fmt.Errorf("zkserver: starting %d ZooKeeper server(s): %w%s", o.servers, lastErr, c.logTails())
	c.Close()
	return nil, err
}

// startAttempt allocates ports, writes configurations and starts every server,
// then waits until the cluster serves.
func (c *Cluster) startAttempt(java, classpath string, o options, attempt int) error {
	n := o.servers
	quorum := n > 1 || o.quorum
	perServer := 1 // client port
	if quorum {
		perServer += 2 // peer and election ports
	}
	if o.tls {
		perServer++
	}
	ports, err := allocPorts(n * perServer)
	if err != nil {
		return err
	}
	servers := make([]*Server, n)
	for i := range servers {
		p := ports[i*perServer : (i+1)*perServer]
		s := &Server{
			cluster:    c,
			index:      i,
			id:         i + 1,
			java:       java,
			classpath:  classpath,
			clientPort: p[0],
		}
		if quorum {
			s.peerPort, s.electionPort = p[1], p[2]
		}
		if o.tls {
			s.securePort = p[len(p)-1]
		}
		s.dir = filepath.Join(c.dir, fmt.Sprintf("attempt%d", attempt), fmt.Sprintf("server%d", i))
		servers[i] = s
	}
	for _, s := range servers {
		if err := s.writeConfig(servers, o); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.servers = servers
	c.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	err = c.launchAndWait(ctx, servers)
	if err != nil && !errors.Is(err, errPortInUse) {
		// A server that cannot bind its quorum port may keep running
		// without ever serving; its log tells.
		for _, s := range servers {
			if s.logShowsPortConflict() {
				err = fmt.Errorf("%w: %w", errPortInUse, err)
				break
			}
		}
	}
	return err
}

func (c *Cluster) launchAndWait(ctx context.Context, servers []*Server) error {
	for _, s := range servers {
		if err := s.launch(); err != nil {
			return err
		}
	}
	for _, s := range servers {
		if err := s.waitAnswering(ctx); err != nil {
			return err
		}
	}
	return c.waitReady(ctx, true)
}

// Close kills every server process and removes the cluster's directory,
// logs included. It is idempotent.
func (c *Cluster) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	c.launcher.close()
	c.killAll()
	os.RemoveAll(c.dir)
}

func (c *Cluster) killAll() {
	c.mu.Lock()
	servers := c.servers
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Kill()
		}()
	}
	wg.Wait()
}

// logTails returns the last lines of every server's log, for an error
// message.
func (c *Cluster) logTails() string {
	c.mu.Lock()
	servers := c.servers
	c.mu.Unlock()
	var b strings.Builder
	for _, s := range servers {
		tail, err := s.LogTail(startLogLines)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "\nlast lines of server %d (%s) log:\n%s", s.index, s.Addr(), tail)
	}
	return b.String()
}

// startLogLines is how many lines of each server log a failed Launch
// reports.
const startLogLines = 30

// Servers returns the plain client addresses ("127.0.0.1:port"); index i is
// server i. Servers added by AddServer come last; removed ones keep their
// place (see Server.Removed).
func (c *Cluster) Servers() []string {
	all := c.all()
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Addr()
	}
	return out
}

// ConnectString returns the comma-joined client addresses, the usual
// ZooKeeper connect string.
func (c *Cluster) ConnectString() string {
	return strings.Join(c.Servers(), ",")
}

// SecureServers returns the TLS client addresses; index i is server i. It is
// nil unless the cluster was started WithTLS.
func (c *Cluster) SecureServers() []string {
	if c.tls == nil {
		return nil
	}
	all := c.all()
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.SecureAddr()
	}
	return out
}

// ClientTLSConfig returns a new client TLS configuration that trusts the CA
// which signed the servers' certificates. ServerName is "localhost"; the
// server certificates are valid for localhost, 127.0.0.1 and ::1. It is nil
// unless the cluster was started WithTLS.
func (c *Cluster) ClientTLSConfig() *tls.Config {
	if c.tls == nil {
		return nil
	}
	return c.tls.clientConfig()
}

// Server returns server i (0-based).
func (c *Cluster) Server(i int) *Server {
	return c.all()[i]
}

// Len returns the number of servers.
func (c *Cluster) Len() int {
	return len(c.all())
}

// all returns the servers, those added by AddServer included.
func (c *Cluster) all() []*Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.servers
}

// TickTime returns the tickTime the servers run with.
func (c *Cluster) TickTime() time.Duration {
	return c.tickTime
}

// MinSessionTimeout returns the smallest session timeout the servers grant
// (two ticks); a client asking for less gets this.
func (c *Cluster) MinSessionTimeout() time.Duration {
	return 2 * c.tickTime
}

// Dir returns the cluster's temporary directory, which holds one
// subdirectory per server with its configuration, data and log.
func (c *Cluster) Dir() string {
	return c.dir
}

// Leader returns the index of the server that currently reports Mode leader
// (or standalone). Stopped and paused servers are not asked. It returns an
// error when no server reports being the leader or more than one does.
func (c *Cluster) Leader() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := c.probe(ctx)
	leader, err := st.leader()
	if err != nil {
		return -1, err
	}
	return leader, nil
}

// WaitReady waits until every running, unpaused server answers srvr with a
// serving Mode (leader, follower, observer or standalone), exactly one of them
// is the leader, and at least a quorum of the ensemble serves. It returns the
// last observed problem when ctx ends first.
func (c *Cluster) WaitReady(ctx context.Context) error {
	return c.waitReady(ctx, false)
}

func (c *Cluster) waitReady(ctx context.Context, starting bool) error {
	var last error
	for {
		st := c.probe(ctx)
		last = st.readyErr(c.members())
		if last == nil {
			return nil
		}
		if starting {
			if err := c.startupFailure(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zkserver: cluster not ready: %w (%v)", last, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
}

// startupFailure reports a server process that exited while the cluster was
// starting, classifying port conflicts as errPortInUse.
func (c *Cluster) startupFailure() error {
	for _, s := range c.all() {
		if s.Running() {
			continue
		}
		return s.exitError()
	}
	return nil
}

// clusterState is one round of srvr answers.
type clusterState struct {
	modes []string // "" when the server was not asked (stopped or paused)
	errs  []error
}

func (c *Cluster) probe(ctx context.Context) clusterState {
	all := c.all()
	n := len(all)
	st := clusterState{modes: make([]string, n), errs: make([]error, n)}
	var wg sync.WaitGroup
	for i, s := range all {
		if !s.Running() || s.Paused() || s.Removed() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			m, err := s.Srvr(pctx)
			if err != nil {
				st.errs[i] = err
				return
			}
			st.modes[i] = m["Mode"]
		}()
	}
	wg.Wait()
	return st
}

func (st clusterState) leader() (int, error) {
	leader := -1
	for i, m := range st.modes {
		if m == "leader" || m == "standalone" {
			if leader >= 0 {
				return -1, fmt.Errorf("zkserver: servers %d and %d both report being the leader", leader, i)
			}
			leader = i
		}
	}
	if leader < 0 {
		return -1, fmt.Errorf("zkserver: no server reports being the leader (modes %q, errors %v)", st.modes, errors.Join(st.errs...))
	}
	return leader, nil
}

func (st clusterState) readyErr(n int) error {
	serving := 0
	for i, m := range st.modes {
		if err := st.errs[i]; err != nil {
			return fmt.Errorf("server %d: %w", i, err)
		}
		switch m {
		case "":
		case "leader", "follower", "observer", "standalone":
			serving++
		default:
			return fmt.Errorf("server %d: unexpected mode %q", i, m)
		}
	}
	if _, err := st.leader(); err != nil {
		return err
	}
	if serving < n/2+1 {
		return fmt.Errorf("only %d of %d servers serve, no quorum", serving, n)
	}
	return nil
}

// findZooKeeper locates java and builds the class path.
func findZooKeeper(withTLS bool) (java, classpath string, err error) {
	java = os.Getenv(EnvJava)
	if java == "" {
		if home := os.Getenv("JAVA_HOME"); home != "" {
			if p := filepath.Join(home, "bin", "java"); isExecutable(p) {
				java = p
			}
		}
	}
	if java == "" {
		java, err = exec.LookPath("java")
		if err != nil {
			return "", "", fmt.Errorf("java not found (install a JRE, e.g. Debian package default-jre-headless, or set %s): %w", EnvJava, err)
		}
	} else if !isExecutable(java) {
		return "", "", fmt.Errorf("java %q is not an executable file", java)
	}

	if cp := os.Getenv(EnvClasspath); cp != "" {
		return java, cp, nil
	}
	jars := []string{"zookeeper.jar", "slf4j-simple.jar"}
	if withTLS {
		// zookeeper.jar's manifest names netty-handler, -buffer, -common,
		// -transport and -transport-native-epoll; the Netty server
		// connection factory also needs netty-codec.
		jars = append(jars, "netty-codec.jar")
	}
	paths := make([]string, len(jars))
	for i, j := range jars {
		paths[i] = filepath.Join(javaLibDir, j)
		if _, err := os.Stat(paths[i]); err != nil {
			return "", "", fmt.Errorf("ZooKeeper jar missing (install Debian package zookeeper, or set %s): %w", EnvClasspath, err)
		}
	}
	return java, strings.Join(paths, string(os.PathListSeparator)), nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	data = bytes.TrimRight(data, "\n")
	lines := make([]string, 0, n)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if len(lines) == n {
			copy(lines, lines[1:])
			lines = lines[:n-1]
		}
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines, "\n"), nil
}

// launcher starts processes from one dedicated, locked OS thread. The
// parent-death signal (Pdeathsig) of a child fires when the thread that
// forked it exits, so forking from a thread that lives until every child is
// gone keeps the signal meaningful: it fires only if the program dies.
type launcher struct {
	reqs chan launchReq
	done chan struct{}

	mu     sync.Mutex
	closed bool
}

type launchReq struct {
	cmd *exec.Cmd
	res chan error
}

func newLauncher() *launcher {
	l := &launcher{reqs: make(chan launchReq), done: make(chan struct{})}
	go func() {
		// Never unlocked: the thread exits with the goroutine, after
		// every child has been reaped.
		runtime.LockOSThread()
		defer close(l.done)
		for r := range l.reqs {
			r.res <- r.cmd.Start()
		}
	}()
	return l
}

var errClosed = errors.New("zkserver: cluster is shut down")

func (l *launcher) start(cmd *exec.Cmd) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errClosed
	}
	res := make(chan error, 1)
	l.reqs <- launchReq{cmd: cmd, res: res}
	return <-res
}

// close stops the launcher thread. Children still running then receive
// their parent-death signal.
func (l *launcher) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.reqs)
	}
	l.mu.Unlock()
	<-l.done
}

// itoa is strconv.Itoa, shortened for configuration building.
func itoa(i int) string { return strconv.Itoa(i) }
