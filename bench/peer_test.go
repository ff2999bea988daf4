//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/interop"
)

// A peer is a benchmark program in another language (bench/peers), driven
// line by line: it prints "ready", then answers every command line
// "NAME key=value ..." with one line, "ok {json}" or "err message".
type peer struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan struct{}

	callMu sync.Mutex // one command at a time

	mu     sync.Mutex
	stderr bytes.Buffer
}

// peerReply is the JSON a peer answers a command with.
type peerReply struct {
	Samples []float64          `json:"samples"`
	Ops     int                `json:"ops"`
	Extra   map[string]float64 `json:"extra"`
}

func (r peerReply) out() stepOut { return stepOut{values: r.Samples, ops: r.Ops, extra: r.Extra} }

// startPeer starts a peer process and waits for its "ready".
func startPeer(ctx context.Context, name, bin string, args ...string) (*peer, error) {
	return startPeerEnv(ctx, nil, name, bin, args...)
}

// startPeerEnv is startPeer with variables added to the environment.
func startPeerEnv(ctx context.Context, env []string, name, bin string, args ...string) (*peer, error) {
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	// The peer dies with the benchmark.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &peer{name: name, cmd: cmd, lines: make(chan string, 64), done: make(chan struct{})}
	cmd.Stderr = lockedWriter{p}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		cmd.Wait()
		close(p.lines)
		close(p.done)
	}()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		l, err := p.next(ctx)
		if err != nil {
			p.kill()
			return nil, err
		}
		if l == "ready" {
			return p, nil
		}
	}
}

type lockedWriter struct{ p *peer }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.p.stderr.Len() > 1<<20 {
		w.p.stderr.Reset()
	}
	return w.p.stderr.Write(b)
}

func (p *peer) stderrTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stderr.String()
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

func (p *peer) next(ctx context.Context) (string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", fmt.Errorf("%s exited; stderr:\n%s", p.name, p.stderrTail())
		}
		return l, nil
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for %s: %w", p.name, ctx.Err())
	}
}

// call sends one command and waits (bounded by ctx and timeout) for its
// answer.
func (p *peer) call(ctx context.Context, timeout time.Duration, name string, args map[string]any) (peerReply, error) {
	p.callMu.Lock()
	defer p.callMu.Unlock()
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	line := name
	for _, k := range keys {
		line += fmt.Sprintf(" %s=%v", k, args[k])
	}
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		return peerReply{}, fmt.Errorf("%s: send %q: %w", p.name, line, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		l, err := p.next(ctx)
		if err != nil {
			// The peer is now out of step with us: it cannot be used again.
			p.kill()
			return peerReply{}, fmt.Errorf("%s: %s: %w", p.name, line, err)
		}
		switch {
		case strings.HasPrefix(l, "ok "):
			var r peerReply
			if err := json.Unmarshal([]byte(l[3:]), &r); err != nil {
				return r, fmt.Errorf("%s: %s: bad answer %q: %w", p.name, line, l, err)
			}
			return r, nil
		case strings.HasPrefix(l, "err "):
			return peerReply{}, fmt.Errorf("%s: %s: %s", p.name, line, l[4:])
		}
	}
}

// kill ends the peer process and waits for it.
func (p *peer) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	go func() {
		for range p.lines {
		}
	}()
	<-p.done
}

// close asks the peer to exit (stdin closed), killing it after a while.
func (p *peer) close() {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

// peerDir is where the peer sources live, relative to the package.
const peerDir = "peers"

// runJavac compiles a Java peer against the Curator and ZooKeeper jars.
func runJavac(ctx context.Context, dir, src string) error {
	out, err := exec.CommandContext(ctx, "javac", "-nowarn", "-cp", interop.Classpath(), "-d", dir, src).CombinedOutput()
	if err != nil {
		return fmt.Errorf("javac %s: %v\n%s", src, err, out)
	}
	return nil
}

// javaArgs runs class from dir with the JVM's default settings: a
// benchmark must not handicap the JIT.
func javaArgs(dir, class string, args ...string) []string {
	// ZKBENCH_JAVA_OPTS adds JVM options, to see how Curator fares with
	// other settings (the interop tests run it with
	// -XX:TieredStopAtLevel=1, for example).
	opts := strings.Fields(os.Getenv("ZKBENCH_JAVA_OPTS"))
	opts = append(opts, "-cp", dir+string(os.PathListSeparator)+interop.Classpath(), class)
	return append(opts, args...)
}

// python is the interpreter with Debian's python3-kazoo: the system one,
// which a python3 earlier on PATH (pyenv, a venv) may shadow.
func python() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// startKazoo starts the Kazoo peer for the active setting.
func startKazoo(ctx context.Context) (*peer, error) {
	src, err := filepath.Abs(filepath.Join(peerDir, "kazoo_bench.py"))
	if err != nil {
		return nil, err
	}
	connect, err := peerConnect()
	if err != nil {
		return nil, err
	}
	return startPeer(ctx, "Kazoo", python(), "-u", src, connect)
}

// peerConnect is the connect string of a new peer process: all its
// clients share one proxy, which delays each of their connections alike.
func peerConnect() (string, error) {
	servers, err := clientServers()
	if err != nil {
		return "", err
	}
	return strings.Join(servers, ","), nil
}
