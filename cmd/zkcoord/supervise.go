package main

import (
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

	"github.com/zkcoord/zkcoord"
	"golang.org/x/sys/unix"
)

// A child is a command zkcoord runs on behalf of the user: under a lock,
// while leading, or for a resource. It runs in a process group of its own,
// so that stopping it stops everything it started, and it receives SIGKILL
// from the kernel if zkcoord itself dies (PR_SET_PDEATHSIG), so that a
// killed zkcoord never leaves it running without the lock it was started
// under.
//
// Stop asks politely first: SIGTERM to the group, SIGKILL after a grace
// period, and it returns only once the child is gone and every other process
// left in its group has been killed.
type child struct {
	name string
	pid  int
	cmd  *exec.Cmd
	done chan struct{}

	mu     sync.Mutex
	status int // exit status; 128+signal when killed by a signal
	err    error
}

// childSpec describes a child.
type childSpec struct {
	name   string   // for logs
	argv   []string // argv[0] is looked up in PATH
	env    []string // KEY=VALUE, added to zkcoord's environment
	stdin  bool     // pass zkcoord's standard input on, unless it is a terminal
	stdout io.Writer
	stderr io.Writer
}

// startChild starts a child.
func startChild(spec childSpec) (*child, error) {
	if len(spec.argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
	cmd.Env = append(os.Environ(), spec.env...)
	if spec.stdin && !isTerminal(os.Stdin) {
		// A terminal is not passed on: the child runs in a process group
		// of its own, which the terminal would stop when it reads.
		cmd.Stdin = os.Stdin
	}
	cmd.Stdout, cmd.Stderr = spec.stdout, spec.stderr
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second // output copying must not outlive the child by long
	if err := spawn(cmd.Start); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	c := &child{name: spec.name, pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	go c.wait()
	return c, nil
}

func (c *child) wait() {
	err := c.cmd.Wait()
	// Anything the child left in its group goes with it.
	_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	status := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = 128 + int(ws.Signal())
		} else {
			status = ee.ExitCode()
		}
	}
	c.mu.Lock()
	c.status, c.err = status, err
	c.mu.Unlock()
	close(c.done)
}

// Done is closed once the child has exited.
func (c *child) Done() <-chan struct{} { return c.done }

// Status returns the exit status (valid after Done): the exit code, or 128
// plus the signal number if a signal killed it.
func (c *child) Status() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Describe says how the child ended, for logs.
func (c *child) Describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.err != nil:
		return c.err.Error()
	case c.status > 128:
		return "killed by " + unix.SignalName(syscall.Signal(c.status-128))
	}
	return fmt.Sprintf("exit status %d", c.status)
}

// Stop sends SIGTERM to the child's process group and, if the child has not
// exited after grace, SIGKILL; it returns once the child has exited. A grace
// of zero or less kills at once.
func (c *child) Stop(grace time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	if grace <= 0 {
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		<-c.done
		return
	}
	_ = syscall.Kill(-c.pid, syscall.SIGTERM)
	_ = syscall.Kill(-c.pid, syscall.SIGCONT) // in case it is stopped
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		<-c.done
	}
}

// Pid returns the child's process id.
func (c *child) Pid() int { return c.pid }

// lossGrace returns how long a child may take to stop after the loss, with
// cause, of the lock, leadership or resource it ran under. After a Session
// declared itself Lost, the server cannot expire the session (and let
// someone else in) before the rest of the session timeout has passed: the
// child gets most of that, at most grace. After anything else (the session
// expired, the node was deleted, a newer leader took over), someone else
// may already own it: the child is killed at once.
func lossGrace(sess *zkcoord.Session, cause error, grace time.Duration) time.Duration {
	switch {
	case errors.Is(cause, zkcoord.ErrSessionLost):
		left := (sess.Timeout() - sess.LostAfter()) * 3 / 4
		return max(0, min(grace, left))
	case errors.Is(cause, zkcoord.ErrSessionClosed):
		return grace
	}
	return 0
}

// spawnc feeds the goroutine that starts every child. It is locked to its OS
// thread and never returns, because Linux sends the parent-death signal when
// the thread that forked the child ends, not when the process ends.
var (
	spawnOnce sync.Once
	spawnc    chan func()
)

func spawn(start func() error) error {
	spawnOnce.Do(func() {
		spawnc = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range spawnc {
				f()
			}
		}()
	})
	res := make(chan error, 1)
	spawnc <- func() { res <- start() }
	return <-res
}

// shellMeta are the characters that make a command template need a shell.
const shellMeta = "|&;<>()$`\\\"'*?[]#~=%!{}\n"

// commandTemplate is a command line with {placeholders}, such as
// "consume --queue {resource}".
type commandTemplate struct {
	text  string
	shell bool     // run with sh -c; text refers to placeholders by variable
	words []string // without a shell: the words, placeholders unexpanded
}

// parseTemplate prepares a command template. Without shell syntax (once the
// placeholders are removed) the command is split into words and run
// directly, each placeholder expanding to exactly one argument piece. With
// shell syntax it runs under /bin/sh -c, and a placeholder never becomes
// shell text: {name} turns into a reference to the environment variable
// ZKCOORD_NAME, which the child gets, quoted so that the value is one word
// whatever it holds. A placeholder inside single quotes cannot be expanded
// that way and is refused.
func parseTemplate(text string, placeholders ...string) (commandTemplate, error) {
	if strings.TrimSpace(text) == "" {
		return commandTemplate{}, errors.New("empty command")
	}
	bare := text
	for _, p := range placeholders {
		bare = strings.ReplaceAll(bare, "{"+p+"}", "x")
	}
	if !strings.ContainsAny(bare, shellMeta) {
		return commandTemplate{text: text, words: strings.Fields(text)}, nil
	}
	script, err := shellScript(text, placeholders)
	if err != nil {
		return commandTemplate{}, err
	}
	return commandTemplate{text: script, shell: true}, nil
}

// shellScript replaces each placeholder in a shell command line by a quoted
// reference to its environment variable, following the quoting of the
// command line: "$ZKCOORD_X" outside quotes, $ZKCOORD_X inside double
// quotes.
func shellScript(text string, placeholders []string) (string, error) {
	var out strings.Builder
	single, double := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !single && c == '\\' && i+1 < len(text) {
			out.WriteString(text[i : i+2])
			i++
			continue
		}
		if c == '{' {
			if name, ok := placeholderAt(text[i:], placeholders); ok {
				v := "$" + placeholderVar(name)
				switch {
				case single:
					return "", fmt.Errorf("{%s} inside single quotes: use double quotes or none", name)
				case double:
					out.WriteString(v)
				default:
					out.WriteString(`"` + v + `"`)
				}
				i += len(name) + 1
				continue
			}
		}
		switch {
		case c == '\'' && !double:
			single = !single
		case c == '"' && !single:
			double = !double
		}
		out.WriteByte(c)
	}
	return out.String(), nil
}

// placeholderAt returns the placeholder s starts with, if any.
func placeholderAt(s string, placeholders []string) (string, bool) {
	for _, p := range placeholders {
		if strings.HasPrefix(s, "{"+p+"}") {
			return p, true
		}
	}
	return "", false
}

// placeholderVar is the environment variable that carries a placeholder's
// value to a shell command: ZKCOORD_RESOURCE for {resource}.
func placeholderVar(name string) string { return "ZKCOORD_" + strings.ToUpper(name) }

// argv expands the template with values (placeholder name -> value). A
// shell command gets the values from its environment (placeholderVar),
// which the caller sets.
func (t commandTemplate) argv(values map[string]string) []string {
	if t.shell {
		return []string{"/bin/sh", "-c", t.text}
	}
	out := make([]string, len(t.words))
	for i, w := range t.words {
		for k, v := range values {
			w = strings.ReplaceAll(w, "{"+k+"}", v)
		}
		out[i] = w
	}
	return out
}

// expandArgs replaces placeholders in a command given as separate arguments
// (after "--"); no shell is involved.
func expandArgs(args []string, values map[string]string) []string {
	out := make([]string, len(args))
	for i, w := range args {
		for k, v := range values {
			w = strings.ReplaceAll(w, "{"+k+"}", v)
		}
		out[i] = w
	}
	return out
}
