package launch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/wait"
)

// TestHelperProcess is the child side: it plays the role named in RoleEnv.
func TestHelperProcess(t *testing.T) {
	switch Role() {
	case "":
		t.Skip("helper process only")
	case "echo":
		// Echo commands; "exit N" exits with status N; "stderr X" writes X
		// to stderr; SIGTERM prints "bye" and exits 0.
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			fmt.Println("bye")
			os.Exit(0)
		}()
		fmt.Println("ready", strings.Join(Args(), ","))
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "exit "):
				code, _ := strconv.Atoi(strings.TrimPrefix(line, "exit "))
				os.Exit(code)
			case strings.HasPrefix(line, "stderr "):
				fmt.Fprintln(os.Stderr, strings.TrimPrefix(line, "stderr "))
				fmt.Println("wrote stderr")
			default:
				fmt.Println("echo:", line)
			}
		}
		fmt.Println("eof")
		os.Exit(0)
	case "ticker":
		// Prints "tick N" every few milliseconds until killed; ignores
		// SIGTERM.
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		for i := 0; ; i++ {
			fmt.Println("tick", i)
			time.Sleep(5 * time.Millisecond)
		}
	case "parent":
		// Starts a ticker grandchild, reports its pid, and waits forever.
		p, err := Start(context.Background(), Self("grandchild", "ticker"), nil)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("child", p.Pid())
		select {}
	default:
		fmt.Fprintln(os.Stderr, "unknown role", Role())
		os.Exit(2)
	}
}

// lines collects a process's output and lets a test wait for a line.
type lines struct {
	mu    sync.Mutex
	all   []string
	added chan struct{} // closed and replaced on every line
}

func newLines() *lines { return &lines{added: make(chan struct{})} }

func (l *lines) sink(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, line)
	close(l.added)
	l.added = make(chan struct{})
}

func (l *lines) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.all...)
}

// wait waits for a line starting with prefix and returns it.
func (l *lines) wait(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for i := 0; ; {
		l.mu.Lock()
		for ; i < len(l.all); i++ {
			if strings.HasPrefix(l.all[i], prefix) {
				s := l.all[i]
				l.mu.Unlock()
				return s
			}
		}
		added := l.added
		l.mu.Unlock()
		select {
		case <-added:
		case <-deadline:
			t.Fatalf("no line starting with %q; got %q", prefix, l.snapshot())
		}
	}
}

func start(t *testing.T, g *Group, name, role string, args ...string) (*Proc, *lines) {
	t.Helper()
	l := newLines()
	p, err := g.Start(context.Background(), Self(name, role, args...), l.sink)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s stderr:\n%s", p, p.Stderr())
		}
	})
	return p, l
}

func group(t *testing.T) *Group {
	g := &Group{}
	t.Cleanup(g.Close)
	return g
}

func TestSendAndExit(t *testing.T) {
	p, l := start(t, group(t), "echo-1", "echo", "a", "b c")
	if got := l.wait(t, "ready"); got != "ready a,b c" {
		t.Fatalf("args: %q", got)
	}
	if p.Name() != "echo-1" || p.Pid() <= 0 || p.Exited() || p.ExitErr() != nil {
		t.Fatalf("proc %v exited=%v err=%v", p, p.Exited(), p.ExitErr())
	}
	for i := 0; i < 100; i++ {
		if err := p.Send(fmt.Sprint("line ", i)); err != nil {
			t.Fatal(err)
		}
	}
	l.wait(t, "echo: line 99")
	if err := p.Send("stderr oops\n"); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "wrote stderr")
	if err := p.Send("exit 3"); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	var ee *exec.ExitError
	if err := p.ExitErr(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("ExitErr = %v, want status 3", err)
	}
	if err := p.Wait(context.Background()); !errors.As(err, &ee) {
		t.Fatalf("Wait = %v", err)
	}
	if !strings.Contains(p.Stderr(), "oops") {
		t.Fatalf("Stderr = %q", p.Stderr())
	}
	got := l.snapshot()
	for i := 0; i < 100; i++ {
		if got[1+i] != fmt.Sprint("echo: line ", i) {
			t.Fatalf("line %d = %q (lines out of order?)", i, got[1+i])
		}
	}
	for _, f := range []func() error{func() error { return p.Send("x") }, p.Pause, p.Resume} {
		if err := f(); !errors.Is(err, ErrExited) {
			t.Fatalf("after exit: %v, want ErrExited", err)
		}
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("Kill after exit: %v", err)
	}
}

func TestCloseStdin(t *testing.T) {
	p, l := start(t, group(t), "echo", "echo")
	l.wait(t, "ready")
	if err := p.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	l.wait(t, "eof")
	if err := p.Wait(context.Background()); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

func TestKill(t *testing.T) {
	p, l := start(t, group(t), "ticker", "ticker")
	l.wait(t, "tick 3")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Kill returned before Done")
	}
	var ee *exec.ExitError
	if err := p.ExitErr(); !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("ExitErr = %v, want killed", err)
	}
	// Every line was delivered before Kill returned, and none comes after.
	n := len(l.snapshot())
	if last := l.snapshot()[n-1]; !strings.HasPrefix(last, "tick ") {
		t.Fatalf("last line %q", last)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", p.Pid())); err == nil {
		t.Fatalf("pid %d still exists after Kill", p.Pid())
	}
	if len(l.snapshot()) != n {
		t.Fatal("lines delivered after Kill returned")
	}
}

func TestPauseResume(t *testing.T) {
	p, l := start(t, group(t), "ticker", "ticker")
	l.wait(t, "tick 1")
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, "the process to stop", p.Paused)
	// While stopped it prints nothing: lines already in the pipe arrive,
	// then the count stays put.
	time.Sleep(100 * time.Millisecond) // measuring, not ordering
	n := len(l.snapshot())
	time.Sleep(200 * time.Millisecond)
	if m := len(l.snapshot()); m != n {
		t.Fatalf("%d lines arrived while paused", m-n)
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, "ticks to resume", func() bool { return len(l.snapshot()) > n+3 })
	if p.Paused() {
		t.Fatal("still paused")
	}
}

func TestTerminate(t *testing.T) {
	g := group(t)
	t.Run("graceful", func(t *testing.T) {
		p, l := start(t, g, "echo", "echo")
		l.wait(t, "ready")
		if err := p.Terminate(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		if err := p.ExitErr(); err != nil {
			t.Fatalf("ExitErr = %v, want clean exit", err)
		}
		l.wait(t, "bye")
	})
	t.Run("ignores SIGTERM", func(t *testing.T) {
		p, l := start(t, g, "ticker", "ticker")
		l.wait(t, "ready")
		if err := p.Terminate(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if p.ExitErr() == nil {
			t.Fatal("want killed")
		}
	})
	t.Run("paused", func(t *testing.T) {
		p, l := start(t, g, "echo", "echo")
		l.wait(t, "ready")
		if err := p.Pause(); err != nil {
			t.Fatal(err)
		}
		wait.Until(t, 30*time.Second, "the process to stop", p.Paused)
		if err := p.Terminate(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		l.wait(t, "bye")
	})
	t.Run("killed while paused", func(t *testing.T) {
		p, l := start(t, g, "ticker", "ticker")
		l.wait(t, "ready")
		p.Pause()
		wait.Until(t, 30*time.Second, "the process to stop", p.Paused)
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	l := newLines()
	p, err := Start(ctx, Self("ticker", "ticker"), l.sink)
	if err != nil {
		t.Fatal(err)
	}
	l.wait(t, "ready")
	cancel()
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("process survived its context")
	}
	if _, err := Start(ctx, Self("x", "ticker"), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a dead context: %v", err)
	}
}

func TestStartError(t *testing.T) {
	if _, err := Start(context.Background(), Spec{Path: "/nonexistent/program"}, nil); err == nil {
		t.Fatal("want an error")
	}
}

func TestGroupClose(t *testing.T) {
	g := &Group{}
	var ps []*Proc
	for i := 0; i < 3; i++ {
		p, l := start(t, g, fmt.Sprint("ticker-", i), "ticker")
		l.wait(t, "ready")
		ps = append(ps, p)
	}
	ps[1].Pause()
	if len(g.Procs()) != 3 {
		t.Fatalf("Procs = %v", g.Procs())
	}
	g.Close()
	for _, p := range ps {
		if !p.Exited() {
			t.Fatalf("%v survived Close", p)
		}
	}
	if _, err := g.Start(context.Background(), Self("late", "ticker"), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
	g.Close()
}

// TestParentDeath: a child dies with the process that started it.
func TestParentDeath(t *testing.T) {
	p, l := start(t, group(t), "parent", "parent")
	line := l.wait(t, "child ")
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "child "))
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if !alive(pid) {
		t.Fatalf("grandchild %d not running", pid)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, "the grandchild to die", func() bool { return !alive(pid) })
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
