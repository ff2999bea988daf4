package launch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkcoord/zkcoord/internal/end"
)

var (
	// ErrExited is wrapped by the methods of a Proc whose process is gone.
	ErrExited = errors.New("launch: process exited")
	// ErrClosed is returned by [Group.Start] after [Group.Close].
	ErrClosed = errors.New("launch: group closed")
)

// drainTimeout bounds how long a Proc waits, after its process exited, for
// the process's output pipes to reach end of file (a grandchild may hold
// them open).
const drainTimeout = 2 * time.Second

// Spec describes a child process.
type Spec struct {
	Path string   // executable
	Args []string // arguments, without the program name
	// Env holds KEY=VALUE entries added to (and overriding) the parent's
	// environment.
	Env  []string
	Name string // for logs and reports; defaults to the base of Path
	Dir  string // working directory; empty means the parent's
}

// Proc is a started child process.
type Proc struct {
	name string
	cmd  *exec.Cmd

	sendMu sync.Mutex
	stdin  io.WriteCloser

	stderr *tail
	exit   *end.End // ends with the exit status once the process is reaped
}

// Start starts the process described by spec. Every line it writes on its
// standard output is passed to sink (without the line break), in order, from
// one goroutine owned by the Proc; sink may be nil. When ctx ends, the
// process is killed. After [Proc.Done] is closed, sink has received every
// line and is never called again.
func Start(ctx context.Context, spec Spec, sink func(line string)) (*Proc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := spec.Name
	if name == "" {
		name = spec.Path[strings.LastIndexByte(spec.Path, '/')+1:]
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = drainTimeout
	p := &Proc{name: name, cmd: cmd, stderr: &tail{max: 64 << 10}, exit: end.New()}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	p.stdin = stdin
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = outW
	err = spawn(cmd.Start)
	outW.Close()
	if err != nil {
		outR.Close()
		stdin.Close()
		return nil, fmt.Errorf("launch: start %s: %w", name, err)
	}

	lines := make(chan struct{})
	go func() {
		defer close(lines)
		readLines(outR, sink)
	}()
	go func() {
		err := cmd.Wait()
		select {
		case <-lines:
		case <-time.After(drainTimeout):
			outR.Close() // unblocks the reader
			<-lines
		}
		outR.Close()
		p.exit.End(err)
	}()
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				p.Kill()
			case <-p.exit.Done():
			}
		}()
	}
	return p, nil
}

func readLines(r io.Reader, sink func(string)) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" && sink != nil {
			sink(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"))
		}
		if err != nil {
			return
		}
	}
}

// spawnc feeds the goroutine that starts every child. It is locked to its OS
// thread and never exits, because Linux delivers the parent-death signal when
// the thread that forked the child ends, not when the process ends (other
// systems have no such signal; the thread costs nothing there).
var spawnc = make(chan func())

func init() {
	go func() {
		runtime.LockOSThread()
		for f := range spawnc {
			f()
		}
	}()
}

func spawn(start func() error) error {
	errc := make(chan error, 1)
	spawnc <- func() { errc <- start() }
	return <-errc
}

// Name returns the name given in the Spec.
func (p *Proc) Name() string { return p.name }

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited, been reaped, and all of its
// standard output has been delivered to the sink.
func (p *Proc) Done() <-chan struct{} { return p.exit.Done() }

// ExitErr returns how the process ended (nil for exit status 0, an
// *exec.ExitError otherwise); it returns nil while the process runs.
func (p *Proc) ExitErr() error { return p.exit.Err() }

// Exited reports whether the process is gone.
func (p *Proc) Exited() bool {
	select {
	case <-p.exit.Done():
		return true
	default:
		return false
	}
}

// Stderr returns the last 64 KiB the process wrote on its standard error.
func (p *Proc) Stderr() string { return p.stderr.String() }

// Wait waits until the process is gone or ctx ends, and returns ExitErr, or
// ctx's error.
func (p *Proc) Wait(ctx context.Context) error {
	select {
	case <-p.exit.Done():
		return p.exit.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// signal sends sig unless the process is gone.
func (p *Proc) signal(sig os.Signal) error {
	err := p.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) || p.Exited() {
		return fmt.Errorf("%w: %s: %v", ErrExited, p.name, sig)
	}
	return err
}

// Kill kills the process and returns once it is gone and its output
// delivered, so that anything recorded after Kill returns happened after the
// process's last action. Killing a process that is already gone is not an
// error.
func (p *Proc) Kill() error {
	if err := p.signal(os.Kill); err != nil && !errors.Is(err, ErrExited) {
		return err
	}
	<-p.exit.Done()
	return nil
}

// Terminate asks the process to exit (SIGTERM, and SIGCONT in case it is
// paused; on Windows, which has no such signal, it kills at once), waits up
// to grace for it to exit, then kills it. It returns once the process is
// gone.
func (p *Proc) Terminate(grace time.Duration) error {
	if !canTerminate {
		return p.Kill()
	}
	if err := p.signal(sigTerm); err != nil {
		if errors.Is(err, ErrExited) {
			<-p.exit.Done()
			return nil
		}
		return err
	}
	p.Resume()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exit.Done():
		return nil
	case <-t.C:
		return p.Kill()
	}
}

// Send writes line, and a line break if it has none, to the process's
// standard input. A paused process does not read, so Send may block once the
// pipe is full (64 KiB on Linux).
func (p *Proc) Send(line string) error {
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	if p.Exited() {
		return fmt.Errorf("%w: %s", ErrExited, p.name)
	}
	if _, err := io.WriteString(p.stdin, line); err != nil {
		if p.Exited() || errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE) {
			return fmt.Errorf("%w: %s: %v", ErrExited, p.name, err)
		}
		return err
	}
	return nil
}

// CloseStdin closes the process's standard input (it reads end of file).
func (p *Proc) CloseStdin() error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	return p.stdin.Close()
}

func (p *Proc) String() string { return fmt.Sprintf("%s[%d]", p.name, p.Pid()) }

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
