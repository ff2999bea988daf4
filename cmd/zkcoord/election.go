package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/election"
)

// electionOptions are the flags of election.
type electionOptions struct {
	asJSON bool
	wait   time.Duration
}

func newElectionCommand(a *app) *cobra.Command {
	var o electionOptions
	cmd := &cobra.Command{
		Use:         "election ls|revoke PATH [--json] [--wait DURATION]",
		Short:       "list the participants of an election, or ask its leader to step down",
		Annotations: brief("ls|revoke PATH"),
		Long: `
  election ls PATH       list the participants of the election at PATH, the leader first
  election revoke PATH   ask the acting leader of the election at PATH to step
                         down, and wait until it has

For a group run with 'zkcoord elect --fence', whose election is PATH/lock,
PATH is enough: both commands look there, as 'zkcoord leader' does.

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
		RunE: subcommandRequired,
	}
	fs := cmd.PersistentFlags()
	fs.BoolVar(&o.asJSON, "json", false, "print JSON (ls: an array of participants; revoke: the leader asked)")
	fs.DurationVar(&o.wait, "wait", 30*time.Second, "revoke: give up (exit 1) if the leader still leads after this `duration`; 0: ask, do not wait")
	addSubcommands(cmd, pathArg, func(cmd *cobra.Command, args []string) error { return runElection(a, cmd.Name(), args[0], &o) },
		subcommand{"ls PATH", "list the participants, the leader first"},
		subcommand{"revoke PATH", "ask the acting leader to step down, and wait until it has"})
	return cmd
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

func runElection(a *app, sub, path string, o *electionOptions) error {
	if o.wait < 0 {
		return cli.Usagef("election: --wait must not be negative")
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	electionPath, _, err := electionAt(ctx, sess, path)
	if err != nil {
		return err
	}
	e, err := election.New(sess, electionPath)
	if err != nil {
		return cli.Usagef("election: %v", err)
	}
	if sub == "revoke" {
		return revokeLeader(ctx, a, sess, e, path, o.asJSON, o.wait)
	}
	ps, err := e.Participants(ctx)
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return err
	}
	if o.asJSON {
		out := make([]participantJSON, 0, len(ps))
		for _, p := range ps {
			out = append(out, participantJSON{ID: p.ID, Node: p.Node, Token: p.Token,
				Session: fmt.Sprintf("0x%x", p.Session), Created: p.Created, Leader: p.Leader, Acting: p.Acting})
		}
		return a.printJSON(out)
	}
	tw := cli.Table(a.Stdout)
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
