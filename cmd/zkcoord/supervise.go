package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
)

// A child is a command zkcoord runs on behalf of the user: under a lock,
// while leading, or for a resource. It runs in a process group of its own,
// so that stopping it stops everything it started, and everything it
// started dies with zkcoord, also when zkcoord itself is killed with
// SIGKILL: on Unix a small shim (zkcoord re-executed, see shim_unix.go)
// stands between them and kills every process below it when zkcoord goes
// away (on Linux also those that left the group), so that a killed zkcoord
// never leaves the command or anything it started running without the lock
// it was started under.
//
// Stop asks politely first: SIGTERM to the child's processes, SIGKILL after
// a grace period, and it returns only once the child is gone and every
// other process it left has been killed and reaped. The grace never reaches
// past the time the server may expire the session the child runs under
// (see [owner]).
type child struct {
	name string
	pid  int
	cmd  *exec.Cmd
	done chan struct{}
	grp  procGroup

	// Set once before done closes, read only after.
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
	path, err := exec.LookPath(spec.argv[0])
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	cmd := &exec.Cmd{Path: path, Args: spec.argv, Env: append(os.Environ(), spec.env...)}
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
	cmd.WaitDelay = 2 * time.Second // output copying must not outlive the child by long
	grp, err := startGroup(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	c := &child{name: spec.name, pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{}), grp: grp}
	go c.wait()
	return c, nil
}

func (c *child) wait() {
	err := c.cmd.Wait()
	// Anything the child left in its group goes with it.
	c.grp.reaped(c.cmd.ProcessState)
	status := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
		status = exitStatusOf(ee.ProcessState)
	}
	c.status, c.err = status, err // read only once done is closed
	close(c.done)
}

// Done is closed once the child has exited.
func (c *child) Done() <-chan struct{} { return c.done }

// Status waits for the child to exit and returns its exit status: the exit
// code, or 128 plus the signal number if a signal killed it.
func (c *child) Status() int {
	<-c.done
	return c.status
}

// Describe waits for the child to exit and says how it ended, for logs.
func (c *child) Describe() string {
	<-c.done
	switch {
	case c.err != nil:
		return c.err.Error()
	case c.status > 128:
		return "killed by " + signalName(c.status-128)
	}
	return fmt.Sprintf("exit status %d", c.status)
}

// An owner is what a child runs under: the Session whose expiry deadline
// bounds every stop of the child, and the ownership (lock, leadership,
// resource) whose end may cut the stop shorter still.
type owner struct {
	sess  *zkcoord.Session
	done  <-chan struct{} // closed when the ownership ends; nil if it has already been taken into account
	cause func() error    // why it ended, once done is closed
}

// Stop sends SIGTERM to the child's processes and, if the child has not
// exited after grace, SIGKILL; it returns once the child has exited. A grace
// of zero or less kills at once.
//
// Whatever grace was asked, the child is killed a safety margin before the
// time the server may expire o's session ([zkcoord.Session.ExpiryDeadline],
// which keeps moving while the Session is connected), and, if the ownership
// ends during the stop, as [lossGrace] says for its cause: at once if
// someone else may already own what the child works on.
func (c *child) Stop(grace time.Duration, o owner) {
	select {
	case <-c.done:
		return
	default:
	}
	if brokenStop() {
		o = owner{} // the grace as asked, whatever happens meanwhile
	}
	if grace <= 0 || !c.grp.terminate() {
		c.kill()
		return
	}
	graceEnd := time.Now().Add(grace)
	graceT := time.NewTimer(grace)
	defer graceT.Stop()
	var (
		expiryT *time.Timer
		expiry  <-chan time.Time // nil without a Session: no bound
	)
	if o.sess != nil {
		expiryT = time.NewTimer(time.Until(killBy(o.sess)))
		defer expiryT.Stop()
		expiry = expiryT.C
	}
	for {
		select {
		case <-c.done:
			return
		case <-graceT.C:
			c.kill()
			return
		case <-o.done:
			o.done = nil
			left := lossGrace(o.sess, o.cause(), grace)
			if left <= 0 {
				c.kill()
				return
			}
			if end := time.Now().Add(left); end.Before(graceEnd) {
				graceT.Reset(time.Until(end))
			}
		case <-expiry:
			// The deadline moves on while the Session hears from the
			// server: kill only once it is really near.
			if wait := time.Until(killBy(o.sess)); wait > 0 {
				expiryT.Reset(wait)
				continue
			}
			c.kill()
			return
		}
	}
}

// kill kills the child's processes and waits for the child.
func (c *child) kill() {
	c.grp.kill()
	<-c.done
}

// A procGroup is every process a child stands for, as the system lets
// zkcoord reach them.
type procGroup interface {
	// terminate asks every process to exit; it reports false where the
	// system has no way to ask (the caller then kills).
	terminate() bool
	// kill kills every process.
	kill()
	// reaped kills whatever is left of the group once the child has been
	// reaped, and frees what the group holds.
	reaped(*os.ProcessState)
}

// Pid returns the child's process id.
func (c *child) Pid() int { return c.pid }

// lossGrace returns how long a child may take to stop after the loss, with
// cause, of the lock, leadership or resource it ran under. After a Session
// declared itself Lost, the server cannot expire the session (and let
// someone else in) before its expiry deadline: the child gets the time left
// until a safety margin before it, at most grace. After anything else (the
// session expired, the node was deleted, a newer leader took over), someone
// else may already own it: the child is killed at once.
func lossGrace(sess *zkcoord.Session, cause error, grace time.Duration) time.Duration {
	switch {
	case errors.Is(cause, zkcoord.ErrSessionLost):
		if brokenStop() {
			return max(0, min(grace, (sess.Timeout()-sess.LostAfter())*3/4))
		}
		return max(0, min(grace, time.Until(killBy(sess))))
	case errors.Is(cause, zkcoord.ErrSessionClosed):
		return grace
	}
	return 0
}

// killBy returns the time by which a child running under sess must be
// dead: a safety margin (a tenth of the session timeout, at least 250ms)
// before the server may expire the session. Before the session is
// established there is no such time, and it returns a time far ahead.
func killBy(sess *zkcoord.Session) time.Time {
	d := sess.ExpiryDeadline()
	if d.IsZero() {
		return time.Now().Add(24 * time.Hour)
	}
	return d.Add(-max(sess.Timeout()/10, 250*time.Millisecond))
}

// brokenStop, brokenPdeathsig and brokenGroupKill are false in every
// shipped build: see brokenEnv (broken_on.go) for the test builds.

func brokenStop() bool { return brokenMode() == "grace" }

func brokenPdeathsig() bool { return brokenMode() == "pdeathsig" }

func brokenGroupKill() bool { return brokenMode() == "group" }

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
