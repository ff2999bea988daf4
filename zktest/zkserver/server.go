package zkserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	pollInterval = 50 * time.Millisecond
	probeTimeout = 2 * time.Second
	// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	stopTimeout = 15 * time.Second
)

// errPortInUse marks start failures caused by a port taken by another process.
var errPortInUse = errors.New("zkserver: port already in use")

// Server is one ZooKeeper server process of a Cluster. Its methods are safe
// for concurrent use.
type Server struct {
	cluster      *Cluster
	index        int
	id           int // myid, index+1
	java         string
	classpath    string
	dir          string
	clientPort   int
	securePort   int
	peerPort     int
	electionPort int
	observer     bool // joined as an observer (AddServer)

	opMu sync.Mutex // serializes Start, Stop, Kill, Pause and Resume

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when the current process has been reaped
	paused  bool
	removed bool  // no longer a member (RemoveServer)
	exitErr error // of the last process, once done is closed
}

// Index returns the server's index in its cluster (0-based).
func (s *Server) Index() int { return s.index }

// ID returns the server's myid (index+1).
func (s *Server) ID() int { return s.id }

// Addr returns the plain client address, "127.0.0.1:port".
func (s *Server) Addr() string { return hostPort(s.clientPort) }

// SecureAddr returns the TLS client address, or "" without WithTLS.
func (s *Server) SecureAddr() string {
	if s.securePort == 0 {
		return ""
	}
	return hostPort(s.securePort)
}

// Dir returns the server's directory, holding zoo.cfg, data/ and server.log.
func (s *Server) Dir() string { return s.dir }

// LogPath returns the path of the file receiving the server's stdout and
// stderr.
func (s *Server) LogPath() string { return s.logPath() }

func (s *Server) logPath() string { return filepath.Join(s.dir, "server.log") }

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) (string, error) { return tailFile(s.logPath(), n) }

func hostPort(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)) }

// Running reports whether the server process is alive (paused counts as
// alive).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runningLocked()
}

func (s *Server) runningLocked() bool {
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Paused reports whether the server process is stopped by Pause.
func (s *Server) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused && s.runningLocked()
}

// Start starts the server again on the same ports and data directory, and
// waits until it answers the srvr command on its client port (up to 60s).
// In an ensemble the server may answer before it has joined a quorum; use
// Cluster.WaitReady to wait for that. It fails when the server is running.
func (s *Server) Start() error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if s.Running() {
		return fmt.Errorf("zkserver: server %d is already running", s.index)
	}
	if err := s.launch(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	return s.waitAnswering(ctx)
}

// Stop sends SIGTERM (resuming a paused server so it can act on it) and
// waits for the process to exit, killing it if it takes longer than 15s.
// On Windows it kills the process. Stopping a server that is not running
// does nothing.
func (s *Server) Stop() error {
	return s.signal("stopping", terminate, stopTimeout)
}

// Kill sends SIGKILL and waits for the process to exit. Killing a server
// that is not running does nothing.
func (s *Server) Kill() error {
	return s.signal("killing", kill, 0)
}

// signal sends send to the server's process and waits for it to exit, for
// at most patience (then it kills it; 0: wait as long as it takes).
func (s *Server) signal(what string, send func(*os.Process) error, patience time.Duration) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	cmd, done, running := s.cmd, s.done, s.runningLocked()
	s.mu.Unlock()
	if !running {
		return nil
	}
	if err := send(cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("zkserver: %s server %d: %w", what, s.index, err)
	}
	var timeout <-chan time.Time
	if patience > 0 {
		timeout = time.After(patience)
	}
	select {
	case <-done:
	case <-timeout:
		_ = cmd.Process.Kill()
		<-done
	}
	s.setPaused(false)
	return nil
}

// Pause stops the server process with SIGSTOP and returns once the kernel
// reports it stopped. Its sockets stay open: connections and new TCP
// handshakes succeed at the kernel level, but nothing is answered. On
// Windows, which has no such signal, it fails with ErrUnsupported.
func (s *Server) Pause() error {
	return s.setStopped(true)
}

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() error {
	return s.setStopped(false)
}

func (s *Server) setStopped(stopped bool) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	cmd, running := s.cmd, s.runningLocked()
	s.mu.Unlock()
	if !running {
		return fmt.Errorf("zkserver: server %d is not running", s.index)
	}
	if err := suspend(cmd.Process, stopped); err != nil {
		return fmt.Errorf("zkserver: signalling server %d: %w", s.index, err)
	}
	s.setPaused(stopped)
	// Signals are delivered asynchronously; wait until the process state
	// reflects this one so callers can rely on it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := procState(cmd.Process.Pid)
		if err != nil || (st == 'T') == stopped {
			return nil // err: /proc unavailable or process gone
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zkserver: server %d did not change state (stopped %v, state %c)", s.index, stopped, st)
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *Server) setPaused(p bool) {
	s.mu.Lock()
	s.paused = p
	s.mu.Unlock()
}

// procState returns the state letter from /proc/pid/stat.
func procState(pid int) (byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name is in parentheses and may contain spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0, errors.New("unexpected /proc stat format")
	}
	return b[i+2], nil
}

// launch starts the java process without waiting for it to serve.
func (s *Server) launch() error {
	logf, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.java, s.javaArgs()...)
	cmd.Dir = s.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	fmt.Fprintf(logf, "zkserver: starting %s %s\n", s.java, strings.Join(cmd.Args[1:], " "))
	if err := s.cluster.launcher.start(cmd); err != nil {
		logf.Close()
		return fmt.Errorf("zkserver: starting server %d: %w", s.index, err)
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.done, s.paused, s.exitErr = cmd, done, false, nil
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close()
		s.mu.Lock()
		s.exitErr = err
		s.mu.Unlock()
		close(done)
	}()
	return nil
}

func (s *Server) javaArgs() []string {
	args := []string{
		"-Xmx256m",
		"-XX:+UseSerialGC",
		"-XX:TieredStopAtLevel=1",
		"-Xshare:auto",
		"-XX:-UsePerfData",
		"-Djava.net.preferIPv4Stack=true",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
	}
	args = append(args, s.cluster.jvmArgs...)
	return append(args,
		"-cp", s.classpath,
		"org.apache.zookeeper.server.quorum.QuorumPeerMain",
		filepath.Join(s.dir, "zoo.cfg"),
	)
}

// waitAnswering polls srvr until the server answers anything, or fails when
// the process exits or ctx ends.
func (s *Server) waitAnswering(ctx context.Context) error {
	var last error
	for {
		if !s.Running() {
			return s.exitError()
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, last = s.FourLetter(pctx, "srvr")
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zkserver: server %d (%s) does not answer: %w", s.index, s.Addr(), last)
		case <-time.After(pollInterval):
		}
	}
}

// exitError describes why the last process exited, wrapping errPortInUse
// when its log shows a port conflict.
func (s *Server) exitError() error {
	s.mu.Lock()
	exitErr := s.exitErr
	s.mu.Unlock()
	err := fmt.Errorf("zkserver: server %d (%s) exited: %v", s.index, s.Addr(), exitErr)
	if s.logShowsPortConflict() {
		err = fmt.Errorf("%w: %w", errPortInUse, err)
	}
	return err
}

// logShowsPortConflict tells whether the server failed on a port another
// process took: a bind failure, or two of the ports picked for the cluster
// (free when picked, bound only later) coming out the same, which
// ZooKeeper refuses in its configuration ("Client and election port must
// be different"): a port peer links' proxies were given after it was
// picked for a server, say.
func (s *Server) logShowsPortConflict() bool {
	b, err := os.ReadFile(s.logPath())
	return err == nil && (strings.Contains(string(b), "Address already in use") ||
		strings.Contains(string(b), "port must be different"))
}

// writeConfig creates the server directory with zoo.cfg and myid.
func (s *Server) writeConfig(all []*Server, o options) error {
	data := filepath.Join(s.dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	tick := int(o.tickTime / time.Millisecond)
	ticks := func(d time.Duration, min int) int {
		n := int((d + o.tickTime - 1) / o.tickTime)
		if n < min {
			n = min
		}
		return n
	}
	var b strings.Builder
	kv := func(k, v string) { b.WriteString(k + "=" + v + "\n") }
	kv("tickTime", itoa(tick))
	kv("initLimit", itoa(ticks(10*time.Second, 10)))
	kv("syncLimit", itoa(ticks(3*time.Second, 5)))
	kv("dataDir", data)
	kv("clientPortAddress", "127.0.0.1")
	kv("clientPort", itoa(s.clientPort))
	kv("minSessionTimeout", itoa(2*tick))
	kv("maxSessionTimeout", itoa(int(MaxSessionTimeout/time.Millisecond)))
	kv("maxClientCnxns", "0")
	kv("4lw.commands.whitelist", "*")
	kv("admin.enableServer", "false")
	// Not a durability test harness: skip fsync (unless WithFsync) and
	// large preallocation.
	if o.fsync {
		kv("forceSync", "yes")
	} else {
		kv("forceSync", "no")
	}
	kv("preAllocSize", "1024")
	kv("autopurge.purgeInterval", "0")
	if s.peerPort != 0 && o.reconfig {
		kv("standaloneEnabled", "false")
		kv("cnxTimeout", "1000")
		if err := s.writeDynamicConfig(&b, all); err != nil {
			return err
		}
	} else if s.peerPort != 0 {
		kv("reconfigEnabled", "false")
		kv("standaloneEnabled", "false")
		// Faster elections when a peer is paused (default 5000ms).
		kv("cnxTimeout", "1000")
		for _, p := range all {
			peer := fmt.Sprintf("127.0.0.1:%d", p.peerPort)
			if p != s && o.peerAddr != nil {
				var err error
				if peer, err = o.peerAddr(s.index, p.index, peer); err != nil {
					return fmt.Errorf("zkserver: routing server %d to server %d: %w", s.index, p.index, err)
				}
			}
			kv("server."+itoa(p.id), fmt.Sprintf("%s:%d", peer, p.electionPort))
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(itoa(s.id)+"\n"), 0o644); err != nil {
			return err
		}
	}
	if o.saslUsers != nil || o.kdc != nil {
		kv("authProvider.sasl", "org.apache.zookeeper.server.auth.SASLAuthenticationProvider")
	}
	if o.tls {
		m := s.cluster.tls
		kv("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory")
		kv("secureClientPortAddress", "127.0.0.1")
		kv("secureClientPort", itoa(s.securePort))
		kv("ssl.keyStore.location", m.keyStorePath)
		kv("ssl.keyStore.type", "PEM")
		kv("ssl.trustStore.location", m.trustStorePath)
		kv("ssl.trustStore.type", "PEM")
		kv("ssl.clientAuth", "none")
	}
	return os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(b.String()), 0o644)
}

var (
	portsMu     sync.Mutex
	portsRecent = map[int]time.Time{} // port -> when it was handed out
)

// portQuarantine is how long a port handed out is not handed out again, so
// clusters started in parallel in one program do not race each other
// for the same port between its allocation and the server binding it.
const portQuarantine = 2 * time.Minute

// allocPorts is freePorts, replaceable by tests.
var allocPorts = freePorts

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries > 100*n {
			return nil, errors.New("zkserver: could not find free ports")
		}
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("zkserver: finding a free port: %w", err)
		}
		held = append(held, l) // keep it open so the next Listen differs
		p := l.Addr().(*net.TCPAddr).Port
		if t, ok := portsRecent[p]; ok && time.Since(t) < portQuarantine {
			continue
		}
		portsRecent[p] = time.Now()
		ports = append(ports, p)
	}
	for p, t := range portsRecent {
		if time.Since(t) >= portQuarantine {
			delete(portsRecent, p)
		}
	}
	return ports, nil
}
