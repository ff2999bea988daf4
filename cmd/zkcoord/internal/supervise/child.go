package supervise

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/zkcoord/zkcoord"
	"golang.org/x/term"
)

// A Child is a command run on behalf of the user: under a lock, while
// leading, or for a resource. It runs in a process group of its own, so
// that stopping it stops everything it started, and everything it started
// dies with the program that started it (see the package documentation).
//
// Stop asks politely first: SIGTERM to the child's processes, SIGKILL after
// a grace period, and it returns only once the child is gone and every
// other process it left has been killed and reaped. The grace never reaches
// past the time the server may expire the session the child runs under
// (see [Child.Stop]).
type Child struct {
	name string
	pid  int
	cmd  *exec.Cmd
	done chan struct{}
	grp  procGroup

	// Set once before done closes, read only after.
	status int // exit status; 128+signal when killed by a signal
	err    error
}

// Spec describes a child.
type Spec struct {
	Name   string   // for errors
	Argv   []string // Argv[0] is looked up in PATH
	Env    []string // KEY=VALUE, added to this process's environment
	Stdin  bool     // pass this process's standard input on, unless it is a terminal
	Stdout io.Writer
	Stderr io.Writer
}

// Find looks a command up as Start will, so that a command that cannot
// run is reported before anything is taken on its behalf.
func Find(argv []string) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("empty command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return "", fmt.Errorf("cannot run %s: %w", argv[0], err)
	}
	return path, nil
}

// Start starts a child.
func Start(spec Spec) (*Child, error) {
	path, err := Find(spec.Argv)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	cmd := &exec.Cmd{Path: path, Args: spec.Argv, Env: append(os.Environ(), spec.Env...)}
	if spec.Stdin && !term.IsTerminal(int(os.Stdin.Fd())) {
		// A terminal is not passed on: the child runs in a process group
		// of its own, which the terminal would stop when it reads.
		cmd.Stdin = os.Stdin
	}
	cmd.Stdout, cmd.Stderr = spec.Stdout, spec.Stderr
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	cmd.WaitDelay = 2 * time.Second // output copying must not outlive the child by long
	grp, err := startGroup(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	c := &Child{name: spec.Name, pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{}), grp: grp}
	go c.wait()
	return c, nil
}

func (c *Child) wait() {
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
func (c *Child) Done() <-chan struct{} { return c.done }

// Status waits for the child to exit and returns its exit status: the exit
// code, or 128 plus the signal number if a signal killed it.
func (c *Child) Status() int {
	<-c.done
	return c.status
}

// Describe waits for the child to exit and says how it ended, for logs.
func (c *Child) Describe() string {
	<-c.done
	switch {
	case c.err != nil:
		return c.err.Error()
	case c.status > 128:
		return "killed by " + signalName(c.status-128)
	}
	return fmt.Sprintf("exit status %d", c.status)
}

// Pid returns the child's process id.
func (c *Child) Pid() int { return c.pid }

// Stop sends SIGTERM to the child's processes and, if the child has not
// exited after grace, SIGKILL; it returns once the child has exited. A grace
// of zero or less kills at once.
//
// Whatever grace was asked, the child is killed a safety margin before the
// time the server may expire sess ([zkcoord.Session.ExpiryDeadline], which
// keeps moving while the Session is connected), and, if own (the lock,
// leadership or resource the child works for) ends during the stop, as
// [LossGrace] says for its cause: at once if someone else may already own
// what the child works on. A nil sess bounds nothing (a child that runs
// under no Session); a nil own is an ownership already taken into account.
func (c *Child) Stop(grace time.Duration, sess *zkcoord.Session, own zkcoord.Ownership) {
	select {
	case <-c.done:
		return
	default:
	}
	if brokenStop() {
		sess, own = nil, nil // the grace as asked, whatever happens meanwhile
	}
	var owned <-chan struct{} // nil without an ownership: never ready
	if own != nil {
		owned = own.Done()
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
	if sess != nil {
		expiryT = time.NewTimer(time.Until(killBy(sess)))
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
		case <-owned:
			owned = nil
			left := LossGrace(sess, own.Err(), grace)
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
			if wait := time.Until(killBy(sess)); wait > 0 {
				expiryT.Reset(wait)
				continue
			}
			c.kill()
			return
		}
	}
}

// kill kills the child's processes and waits for the child.
func (c *Child) kill() {
	c.grp.kill()
	<-c.done
}

// A procGroup is every process a child stands for, as the system lets
// this process reach them.
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

// LossGrace returns how long a child may take to stop after the loss, with
// cause, of the lock, leadership or resource it ran under. After a Session
// declared itself Lost, the server cannot expire the session (and let
// someone else in) before its expiry deadline: the child gets the time left
// until a safety margin before it, at most grace. After the Session was
// closed (an orderly stop) it gets grace. After anything else (the session
// expired, the node was deleted, a newer leader took over), someone else
// may already own it: the child is killed at once. sess is read only for
// ErrSessionLost.
func LossGrace(sess *zkcoord.Session, cause error, grace time.Duration) time.Duration {
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
