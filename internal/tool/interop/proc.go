package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Proc is a running peer.
type Proc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan struct{}

	mu     sync.Mutex
	stderr bytes.Buffer
	err    error
}

// start runs bin with args and, if env is not nil, that environment.
func start(t testing.TB, name string, env []string, bin string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.SysProcAttr = sysProcAttr()
	p := &Proc{name: name, cmd: cmd, lines: make(chan string, 1024), done: make(chan struct{})}
	cmd.Stderr = lockedWriter{p}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatalf("interop: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("interop: start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.lines)
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, p.Stderr())
		}
	})
	return p
}

type lockedWriter struct{ p *Proc }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.stderr.Write(b)
}

// Send writes one command line to the peer's stdin.
func (p *Proc) Send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	if err != nil {
		return fmt.Errorf("interop: send to %s: %w", p.name, err)
	}
	return nil
}

// Next returns the next line the peer printed.
func (p *Proc) Next(ctx context.Context) (string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", fmt.Errorf("interop: %s exited (%v); stderr:\n%s", p.name, p.ExitErr(), p.Stderr())
		}
		return l, nil
	case <-ctx.Done():
		return "", fmt.Errorf("interop: waiting for %s: %w", p.name, ctx.Err())
	}
}

// Expect reads lines until one starts with prefix and returns it.
func (p *Proc) Expect(ctx context.Context, prefix string) (string, error) {
	for {
		l, err := p.Next(ctx)
		if err != nil {
			return "", fmt.Errorf("%w (expecting %q)", err, prefix)
		}
		if strings.HasPrefix(l, prefix) {
			return l, nil
		}
	}
}

// Lines gives direct access to the peer's output lines.
func (p *Proc) Lines() <-chan string { return p.lines }

// Done is closed when the peer has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Pid returns the peer's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Kill kills the peer (SIGKILL) and waits until it is gone.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	go func() { // unblock the reader if nobody drains the lines
		for range p.lines {
		}
	}()
	<-p.done
}

// Wait waits for the peer to exit and returns its exit error.
func (p *Proc) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.ExitErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ExitErr returns the exit error once the peer has exited.
func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Stderr returns what the peer wrote to stderr so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func requireTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, tool)
		}
	}
}

// missing fails the test in CI and skips it elsewhere.
func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("interop: %s is missing; run `make deps`", what)
	}
	t.Skipf("interop: %s is missing; run `make deps`", what)
}
