package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/failover"
)

func newLeaderCommand(a *app) *cobra.Command {
	var asJSON, watch bool
	cmd := &cobra.Command{
		Use:         "leader PATH [--json] [--watch]",
		Short:       "show who leads an election",
		Annotations: brief("PATH"),
		Long: `
Print the leader of the election at PATH: its participant id, node, fencing
token, term and session. "acting" says that the leader has taken office (a
zkcoord leader does so right after it is elected; a Curator LeaderLatch leader
never does); "value", quoted, is what an acting leader advertises, if
anything (election.WithValue, Leadership.Proclaim). For a failover group (elect --fence) at PATH, the breadcrumb
naming the last active process is shown too.

Exits with status 1 if the election has no leader. With --watch, print a line
at every change until interrupted.
`,
		Args: pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLeader(a, args[0], asJSON, watch)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&watch, "watch", false, "print every change until interrupted")
	return cmd
}

// leaderInfo is the --json form.
type leaderInfo struct {
	Path       string      `json:"path"`
	Leader     *leaderJSON `json:"leader"`
	Breadcrumb *crumbJSON  `json:"breadcrumb,omitempty"`
}

type leaderJSON struct {
	ID      string `json:"id"`
	Node    string `json:"node"`
	Token   int64  `json:"token"`
	Term    int64  `json:"term"`
	Session string `json:"session"`
	Acting  bool   `json:"acting"`
	Value   string `json:"value,omitempty"`
}

type crumbJSON struct {
	ID      string `json:"id"`
	Token   int64  `json:"token"`
	Session string `json:"session"`
	Data    string `json:"data"`
}

func runLeader(a *app, path string, asJSON, watch bool) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()

	electionPath, isFailover, err := electionAt(ctx, sess, path)
	if err != nil {
		return err
	}
	var fo *failover.Failover
	if isFailover {
		fo, err = failover.New(sess, path, func(context.Context, failover.Breadcrumb) error { return nil })
		if err != nil {
			return err
		}
	}
	e, err := election.New(sess, electionPath)
	if err != nil {
		return err
	}
	if watch {
		return watchLeader(a, e, path, asJSON)
	}
	l, err := e.Leader(ctx)
	if err != nil && !errors.Is(err, election.ErrNoLeader) {
		return fmt.Errorf("reading the leader of %s: %w", path, err)
	}
	info := leaderInfo{Path: path}
	if err == nil {
		info.Leader = toLeaderJSON(l)
	}
	if fo != nil {
		crumb, err := fo.Breadcrumb(ctx)
		if err != nil {
			return fmt.Errorf("reading the breadcrumb of %s: %w", path, err)
		}
		if crumb != nil {
			data := crumb.Data
			if data == nil {
				data = crumb.Raw
			}
			info.Breadcrumb = &crumbJSON{ID: crumb.ID, Token: crumb.Token, Session: fmt.Sprintf("0x%x", crumb.Session), Data: string(data)}
		}
	}
	if asJSON {
		if err := a.printJSON(info); err != nil {
			return err
		}
	} else {
		printLeader(a, info)
	}
	if info.Leader == nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("%s has no leader", path)}
	}
	return nil
}

func toLeaderJSON(l election.Leader) *leaderJSON {
	return &leaderJSON{ID: l.ID, Node: l.Node, Token: l.Token, Term: l.Term,
		Session: fmt.Sprintf("0x%x", l.Session), Acting: l.Acting, Value: l.Value}
}

func printLeader(a *app, info leaderInfo) {
	tw := cli.Table(a.Stdout)
	defer tw.Flush()
	if info.Leader == nil {
		fmt.Fprintf(tw, "leader\t(none)\n")
	} else {
		l := info.Leader
		fmt.Fprintf(tw, "leader\t%s\n", l.ID)
		fmt.Fprintf(tw, "node\t%s\n", l.Node)
		fmt.Fprintf(tw, "token\t%d\n", l.Token)
		fmt.Fprintf(tw, "term\t%d\n", l.Term)
		fmt.Fprintf(tw, "session\t%s\n", l.Session)
		fmt.Fprintf(tw, "acting\t%s\n", yesNo(l.Acting))
		if l.Value != "" {
			fmt.Fprintf(tw, "value\t%q\n", l.Value)
		}
	}
	if c := info.Breadcrumb; c != nil {
		fmt.Fprintf(tw, "breadcrumb\t%s (token %d, session %s, data %s)\n", c.ID, c.Token, c.Session, c.Data)
	}
}

func watchLeader(a *app, e *election.Election, path string, asJSON bool) error {
	ch := e.Observe(a.Ctx).Changes()
	for l := range ch {
		var line string
		switch {
		case asJSON:
			info := leaderInfo{Path: path}
			if l.ID != "" || l.Node != "" {
				info.Leader = toLeaderJSON(l)
			}
			b, _ := json.Marshal(info)
			line = string(b)
		case l.Node == "":
			line = fmt.Sprintf("%s no leader", time.Now().Format(time.RFC3339Nano))
		default:
			line = fmt.Sprintf("%s leader %s term %d token %d acting %s", time.Now().Format(time.RFC3339Nano),
				l.ID, l.Term, l.Token, yesNo(l.Acting))
			if l.Value != "" {
				line += fmt.Sprintf(" value %q", l.Value)
			}
		}
		a.printf("%s\n", line)
	}
	if a.Ctx.Err() != nil {
		return nil
	}
	return errors.New("stopped watching: the session ended")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// electionAt returns the path of the election of PATH: PATH itself, or
// PATH/lock for a failover group ('zkcoord elect --fence'), which keeps its
// election there and says so with PATH/lock-term.
func electionAt(ctx context.Context, sess *zkcoord.Session, path string) (string, bool, error) {
	ok, _, err := sess.Exists(ctx, zkcoord.Join(path, "lock-term"))
	if err != nil && !errors.Is(err, zkcoord.ErrNoNode) {
		return "", false, fmt.Errorf("reading %s: %w", path, err)
	}
	if !ok {
		return path, false, nil
	}
	return zkcoord.Join(path, "lock"), true, nil
}
