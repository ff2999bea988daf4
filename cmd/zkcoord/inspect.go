package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/lock"
)

var locksCommand = &command{
	name:     "locks",
	synopsis: "ls PATH [--kind mutex|rwlock|semaphore] [--json]",
	brief:    "ls PATH",
	summary:  "list the holders and waiters of a lock",
	help: `
  locks ls PATH   list who holds the lock at PATH and who waits for it

Each line shows whether the contender holds or waits, its node, its fencing
token (the node's creation zxid), the session that owns it, when it came and
the data it wrote (zkcoord writes host:pid or --data; Curator its IP address).
Curator's and Kazoo's contenders are listed too. --kind says which recipe the
lock is: a mutex (lock PATH), the read-write lock (lock --read or --write
PATH) or a semaphore (lock --limit N PATH); for a semaphore the waiters are
the acquirers in line for a lease.

Example:
  zkcoord locks ls /locks/nightly-report --json
`,
	run: runLocks,
}

var electionCommand = &command{
	name:     "election",
	synopsis: "ls|revoke PATH [--json] [--wait DURATION]",
	brief:    "ls|revoke PATH",
	summary:  "list the participants of an election, or ask its leader to step down",
	help: `
  election ls PATH       list the participants of the election at PATH, the leader first
  election revoke PATH   ask the acting leader of the election at PATH to step
                         down, and wait until it has

ls shows on each line the participant id, its node, fencing token, session
and when it joined; "leader" marks the first, "acting" a leader that took
office.

revoke writes a request for the acting leader's term into the election's
revocation node (PATH-revoke) and waits until the leader's node is gone. The
leader decides: only one that opted in steps down - 'zkcoord elect
--revocable', a zkcoord program watching Leadership.Revoked that resigns. Any
other leader ignores the request. Exit status 0 once the leader has stepped
down (prints "stepped down" and the leader asked: id, node, token, term and
session); 1 if it still leads after --wait (it did not opt in, or is still
stopping). With --wait 0 zkcoord only asks (prints "asked to step down") and
exits 0 without waiting. A leader that has not taken office (a Curator
LeaderLatch leader never does) cannot be asked (exit 1).

Examples:
  zkcoord election ls /services/billing
  zkcoord election revoke /services/billing
`,
	run: runElection,
}

// contenderJSON is the --json form of a lock contender.
type contenderJSON struct {
	Node    string    `json:"node"`
	Holds   bool      `json:"holds"`
	Writer  bool      `json:"writer"`
	Token   int64     `json:"token"`
	Session string    `json:"session"`
	Since   time.Time `json:"since"`
	Data    string    `json:"data"`
}

func toContenderJSON(c lock.Contender) contenderJSON {
	return contenderJSON{Node: c.Path, Holds: c.Holds, Writer: c.Writer, Token: c.Token,
		Session: fmt.Sprintf("0x%x", c.Session), Since: c.Since, Data: string(c.Data)}
}

func runLocks(a *app, cmd *command, args []string) error {
	_, fs, args, err := a.subFlags(cmd, args, "ls")
	if err != nil {
		return err
	}
	kind := fs.String("kind", "mutex", "the lock's `kind`: mutex, rwlock or semaphore")
	asJSON := fs.Bool("json", false, "print a JSON array")
	path, _, err := fs.pathArg(args)
	if err != nil {
		return err
	}
	switch *kind {
	case "mutex", "rwlock", "semaphore":
	default:
		return usagef("locks: --kind: want mutex, rwlock or semaphore, not %q", *kind)
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	cs, err := contenders(ctx, sess, path, *kind)
	if err != nil {
		return fmt.Errorf("listing the contenders of %s: %w", path, err)
	}
	if *asJSON {
		out := make([]contenderJSON, 0, len(cs))
		for _, c := range cs {
			out = append(out, toContenderJSON(c))
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tNODE\tTOKEN\tSESSION\tSINCE\tDATA")
	for _, c := range cs {
		state := "waits"
		if c.Holds {
			state = "holds"
		}
		if *kind == "rwlock" {
			if c.Writer {
				state += " (write)"
			} else {
				state += " (read)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t0x%x\t%s\t%s\n", state, c.Path, c.Token, c.Session,
			c.Since.Format(time.RFC3339), c.Data)
	}
	return tw.Flush()
}

// contenders lists a lock's holders and waiters by its kind.
func contenders(ctx context.Context, sess *zkcoord.Session, path, kind string) ([]lock.Contender, error) {
	switch kind {
	case "rwlock":
		rw, err := lock.NewRWMutex(sess, path)
		if err != nil {
			return nil, usagef("locks: %v", err)
		}
		return rw.Contenders(ctx)
	case "semaphore":
		// Holders does not need the number of leases to list the nodes;
		// every lease node is listed, the holders first.
		s, err := lock.NewSemaphore(sess, path, 1)
		if err != nil {
			return nil, usagef("locks: %v", err)
		}
		leases, waiting, err := s.Holders(ctx)
		if err != nil {
			return nil, err
		}
		return append(leases, waiting...), nil
	}
	m, err := lock.NewMutex(sess, path)
	if err != nil {
		return nil, usagef("locks: %v", err)
	}
	return m.Contenders(ctx)
}

// participantJSON is the --json form of an election participant.
type participantJSON struct {
	ID      string    `json:"id"`
	Node    string    `json:"node"`
	Token   int64     `json:"token"`
	Session string    `json:"session"`
	Created time.Time `json:"created"`
	Leader  bool      `json:"leader"`
	Acting  bool      `json:"acting"`
}

func runElection(a *app, cmd *command, args []string) error {
	sub, fs, args, err := a.subFlags(cmd, args, "ls", "revoke")
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON (ls: an array of participants; revoke: the leader asked)")
	wait := fs.Duration("wait", 30*time.Second, "revoke: give up (exit 1) if the leader still leads after this `duration`; 0: ask, do not wait")
	path, _, err := fs.pathArg(args)
	if err != nil {
		return err
	}
	if *wait < 0 {
		return usagef("election: --wait must not be negative")
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	e, err := election.New(sess, path)
	if err != nil {
		return usagef("election: %v", err)
	}
	if sub == "revoke" {
		return revokeLeader(ctx, a, sess, e, path, *asJSON, *wait)
	}
	ps, err := e.Participants(ctx)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return err
	}
	if *asJSON {
		out := make([]participantJSON, 0, len(ps))
		for _, p := range ps {
			out = append(out, participantJSON{ID: p.ID, Node: p.Node, Token: p.Token,
				Session: fmt.Sprintf("0x%x", p.Session), Created: p.Created, Leader: p.Leader, Acting: p.Acting})
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tID\tNODE\tTOKEN\tSESSION\tSINCE")
	for _, p := range ps {
		role := "waits"
		switch {
		case p.Acting:
			role = "leader (acting)"
		case p.Leader:
			role = "leader"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t0x%x\t%s\n", role, p.ID, p.Node, p.Token, p.Session,
			p.Created.Format(time.RFC3339))
	}
	return tw.Flush()
}

// revokeLeader asks the acting leader of e to step down, waits at most
// wait until it has (not at all if wait is 0), and prints it.
func revokeLeader(ctx context.Context, a *app, sess *zkcoord.Session, e *election.Election, path string, asJSON bool,
	wait time.Duration) error {
	l, err := e.Revoke(ctx)
	switch {
	case errors.Is(err, election.ErrNoLeader):
		return fmt.Errorf("%s has no leader", path)
	case errors.Is(err, election.ErrNotActing):
		return fmt.Errorf("the leader %s of %s has not taken office and cannot be asked to step down", l.ID, path)
	case err != nil:
		return err
	}
	verb := "asked to step down"
	if wait > 0 {
		err := waitGone(a, sess, l.Node, wait)
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("the leader %s of %s (node %s token %d term %d session 0x%x) still leads %v after it was asked to step down: "+
				"only a leader that opted in ('zkcoord elect --revocable') resigns", l.ID, path, l.Node, l.Token, l.Term, l.Session, wait)
		}
		if err != nil {
			return err
		}
		verb = "stepped down"
	}
	if asJSON {
		return a.printJSON(struct {
			ID      string `json:"id"`
			Node    string `json:"node"`
			Token   int64  `json:"token"`
			Term    int64  `json:"term"`
			Session string `json:"session"`
		}{l.ID, l.Node, l.Token, l.Term, fmt.Sprintf("0x%x", l.Session)})
	}
	a.printf("%s %s leader %s node %s token %d term %d session 0x%x\n", verb, path, l.ID, l.Node, l.Token, l.Term, l.Session)
	return nil
}

// printJSON prints v as indented JSON on standard output.
func (a *app) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	a.printf("%s\n", b)
	return nil
}
