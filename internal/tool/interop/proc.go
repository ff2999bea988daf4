package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/zkcoord/zkcoord/internal/tool/launch"
)

// Proc is a running peer: a launch.Proc whose output lines are read one by
// one.
type Proc struct {
	*launch.Proc
	lines chan string // closed once the peer is gone and every line read
}

// start runs bin with args, and env added to the environment.
func start(t testing.TB, name string, env []string, bin string, args ...string) *Proc {
	t.Helper()
	lines := make(chan string, 1024)
	lp, err := launch.Start(context.Background(), launch.Spec{Path: bin, Args: args, Env: env, Name: name},
		func(line string) { lines <- line })
	if err != nil {
		t.Fatalf("interop: %v", err)
	}
	p := &Proc{Proc: lp, lines: lines}
	go func() {
		<-lp.Done() // the last line is delivered
		close(lines)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, p.Stderr())
		}
	})
	return p
}

// Send writes one command line to the peer's stdin.
func (p *Proc) Send(line string) error {
	if err := p.Proc.Send(line); err != nil {
		return fmt.Errorf("interop: send to %s: %w", p.Name(), err)
	}
	return nil
}

// Next returns the next line the peer printed.
func (p *Proc) Next(ctx context.Context) (string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", fmt.Errorf("interop: %s exited (%v); stderr:\n%s", p.Name(), p.ExitErr(), p.Stderr())
		}
		return l, nil
	case <-ctx.Done():
		return "", fmt.Errorf("interop: waiting for %s: %w", p.Name(), ctx.Err())
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

// Kill kills the peer (SIGKILL) and waits until it is gone.
func (p *Proc) Kill() {
	go func() { // unblock the reader if nobody drains the lines
		for range p.lines {
		}
	}()
	_ = p.Proc.Kill()
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
