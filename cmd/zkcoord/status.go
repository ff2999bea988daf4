package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/internal/groupwatch"
	"github.com/zkcoord/zkcoord/rebalance"
)

// statusOptions are the flags of status.
type statusOptions struct {
	root          string
	asJSON, watch bool
}

func newStatusCommand(a *app) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:         "status GROUP [--json] [--watch] [--root PATH]",
		Short:       "show a group: members, coordinator, term, allocation, barriers",
		Annotations: brief("GROUP"),
		Long: `
Show the state of the rebalancing group GROUP as ZooKeeper holds it: its
members in election order (the first is the coordinator), the coordinator's
term, the allocation (which member should run which resource, and the
generation of that allocation), and the barriers (which member actually holds
each resource, with its fencing token). While a rebalancing is under way, the
resources still moving are listed.

With --json, print the description as one JSON object (the fields of
rebalance.Description). With --watch, print it again after every change until
interrupted.

Exits with status 1 if the group does not exist.
`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := wantArgs(cmd, args, "GROUP"); err != nil {
				return err
			}
			return checkGroup(cmd, args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(a, args[0], &o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.root, "root", rebalance.DefaultRoot, "`path` under which groups live")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	fs.BoolVar(&o.watch, "watch", false, "print again after every change until interrupted")
	return cmd
}

func runStatus(a *app, group string, o *statusOptions) error {
	sess, err := a.open()
	if err != nil {
		return err
	}
	defer cli.CloseSession(sess)

	show := func(d *rebalance.Description) {
		if o.asJSON {
			b, _ := json.Marshal(d)
			a.printf("%s\n", b)
			return
		}
		printStatus(a.Stdout, d)
	}
	if o.watch {
		err := groupwatch.Watch(a.Ctx, sess, o.root, group, func(s groupwatch.Snapshot) {
			if !o.asJSON {
				a.printf("--- %s\n", s.At.Format(time.RFC3339Nano))
			}
			if s.D == nil {
				if o.asJSON {
					a.printf("null\n")
				} else {
					a.printf("group %s does not exist\n", group)
				}
				return
			}
			show(s.D)
		})
		if a.Ctx.Err() != nil {
			return nil
		}
		return err
	}
	ctx, cancel := a.opContext(sess)
	defer cancel()
	d, err := rebalance.Describe(ctx, sess, zkcoord.Join(o.root, group))
	if errors.Is(err, rebalance.ErrNoGroup) {
		return fmt.Errorf("no group %s under %s", group, o.root)
	}
	if d == nil {
		return fmt.Errorf("reading the group %s: %w", group, err)
	}
	show(d)
	if err != nil {
		return fmt.Errorf("reading the group %s: %w", group, err)
	}
	return nil
}

// printStatus prints a description as tables.
func printStatus(w io.Writer, d *rebalance.Description) {
	tw := cli.Table(w)
	state := "settled"
	switch {
	case len(d.Members) == 0:
		state = "no members: nothing runs its resources"
	case d.Rebalancing:
		state = fmt.Sprintf("rebalancing (%d resources moving)", len(d.Pending))
	}
	coord := "(none)"
	if d.Coordinator != "" {
		coord = d.Coordinator
		if n := groupwatch.MemberName(d, d.Coordinator); n != d.Coordinator {
			coord += " (" + n + ")"
		}
	}
	fmt.Fprintf(tw, "group\t%s\n", d.Path)
	fmt.Fprintf(tw, "coordinator\t%s\n", coord)
	fmt.Fprintf(tw, "term\t%d\n", d.Term)
	fmt.Fprintf(tw, "generation\t%d\n", d.Generation)
	fmt.Fprintf(tw, "state\t%s\n", state)
	if d.Status != nil {
		fmt.Fprintf(tw, "phase\t%s (generation %d, checked in: %s)\n", d.Status.Phase, d.Status.Generation, cli.Words(d.Status.CheckedIn))
	}
	if d.AllocationError != "" {
		fmt.Fprintf(tw, "allocation error\t%s\n", d.AllocationError)
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = cli.Table(w)
	fmt.Fprintln(tw, "MEMBER\tNAME\tHOST\tPID\tMODE\tALLOCATED\tHOLDING")
	for _, m := range d.Members {
		id := m.ID
		if m.Coordinator {
			id += "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", id, cli.Dash(m.Name), cli.Dash(m.Host), m.PID, cli.Dash(m.Mode),
			cli.Words(m.Allocated), cli.Words(m.Holding))
	}
	if len(d.Members) == 0 {
		fmt.Fprintln(tw, "(no members)")
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = cli.Table(w)
	fmt.Fprintln(tw, "RESOURCE\tALLOCATED TO\tHELD BY\tTOKEN")
	owners := map[string]string{}
	for c, rs := range d.Allocation {
		for _, r := range rs {
			owners[r] = c
		}
	}
	barriers := map[string]rebalance.BarrierHolder{}
	for _, b := range d.Barriers {
		barriers[b.Resource] = b
	}
	for _, r := range d.Resources {
		b, held := barriers[r]
		holder, token := "-", "-"
		if held {
			holder, token = cli.Dash(b.Client), fmt.Sprint(b.Token)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r, cli.Dash(owners[r]), holder, token)
	}
	if len(d.Resources) == 0 {
		fmt.Fprintln(tw, "(no resources)")
	}
	tw.Flush()
	if len(d.Pending) > 0 {
		var moves []string
		for _, m := range d.Pending {
			moves = append(moves, fmt.Sprintf("%s %s->%s", m.Resource, cli.Dash(m.From), m.To))
		}
		fmt.Fprintf(w, "\nmoving: %s\n", strings.Join(moves, ", "))
	}
	if len(d.Unallocated) > 0 {
		fmt.Fprintf(w, "\nnot yet allocated: %s\n", strings.Join(d.Unallocated, " "))
	}
}
