package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/barrier"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/zkcoord/internal/supervise"
)

// barrierOptions are the flags of barrier.
type barrierOptions struct {
	timeout   time.Duration
	members   int
	ephemeral bool
}

func newBarrierCommand(a *app) *cobra.Command {
	var o barrierOptions
	cmd := &cobra.Command{
		Use:         "barrier set|rm|wait|check|enter PATH [FLAGS] [-- CMD...]",
		Short:       "hold processes back until a barrier is removed; run CMD in a double barrier",
		Annotations: brief("set|rm|wait|check|enter PATH"),
		Long: `
  barrier set PATH      raise the barrier (create its node)
  barrier rm PATH       lower it, releasing every waiter (also: remove)
  barrier wait PATH     block until the barrier is not set
  barrier check PATH    exit 0 if the barrier is set, 1 if not
  barrier enter PATH --members N [-- CMD...]
                        double barrier: wait until N members have entered, run
                        CMD, then wait until all N have left

The barrier is Apache Curator's DistributedBarrier (a node at PATH), and the
double barrier its DistributedDoubleBarrier, so Java processes can take part.
With set --ephemeral the barrier falls by itself if this process's session ends,
so set then holds the barrier until interrupted.
`,
		RunE: subcommandRequired,
	}
	fs := cmd.PersistentFlags()
	fs.DurationVar(&o.timeout, "timeout", 0, "wait, enter: give up (exit 1) after this `duration`; 0 waits for ever")
	fs.IntVar(&o.members, "members", 0, "enter: `n`, the number of members of the double barrier")
	fs.BoolVar(&o.ephemeral, "ephemeral", false, "set: the barrier falls when this process ends; hold it until interrupted")
	run := func(cmd *cobra.Command, args []string) error {
		pos, cmdArgs := splitCommand(cmd, args)
		return runBarrier(a, cmd.Name(), pos[0], cmdArgs, &o)
	}
	addSubcommands(cmd, pathThenCommand, run,
		subcommand{"set PATH", "raise the barrier (create its node)"},
		subcommand{"rm PATH", "lower the barrier, releasing every waiter (also: remove)"},
		subcommand{"wait PATH", "block until the barrier is not set"},
		subcommand{"check PATH", "exit 0 if the barrier is set, 1 if not"},
		subcommand{"enter PATH --members N [-- CMD...]", "enter a double barrier, run CMD, leave it"})
	return cmd
}

func runBarrier(a *app, sub, path string, cmdArgs []string, o *barrierOptions) error {
	if sub == "enter" && o.members < 1 {
		return cli.Usagef("barrier enter: --members must be at least 1")
	}
	if len(cmdArgs) > 0 && sub != "enter" {
		return cli.Usagef("barrier %s: runs no command", sub)
	}
	sess, err := a.open()
	if err != nil {
		return err
	}
	defer cli.CloseSession(sess)
	var (
		ctx    context.Context
		cancel context.CancelFunc
	)
	switch {
	case (sub == "wait" || sub == "enter") && o.timeout > 0:
		ctx, cancel = context.WithTimeout(a.Ctx, o.timeout)
	case sub == "wait" || sub == "enter":
		ctx, cancel = context.WithCancel(a.Ctx) // waits for ever
	default:
		ctx, cancel = a.opContext(sess)
	}
	defer cancel()

	if sub == "enter" {
		return runDoubleBarrier(ctx, a, sess, path, o.members, o.timeout, cmdArgs)
	}
	var opts []barrier.Option
	if o.ephemeral {
		opts = append(opts, barrier.WithEphemeral())
	}
	b, err := barrier.New(sess, path, opts...)
	if err != nil {
		return cli.Usagef("barrier: %v", err)
	}
	switch sub {
	case "set":
		if err := b.Set(ctx); err != nil {
			return fmt.Errorf("setting the barrier %s: %w", path, err)
		}
		if o.ephemeral {
			a.printf("barrier %s set; holding it until interrupted\n", path)
			select {
			case <-a.Ctx.Done():
				return nil
			case <-sess.Done():
				return cli.Lostf("the session ended, and the barrier with it: %v", sess.Err())
			}
		}
	case "rm":
		if err := b.Remove(ctx); err != nil {
			return fmt.Errorf("removing the barrier %s: %w", path, err)
		}
	case "check":
		set, err := b.IsSet(ctx)
		if err != nil {
			return err
		}
		if !set {
			return &cli.ExitError{Code: cli.ExitFailure}
		}
	case "wait":
		start := time.Now()
		if err := b.Wait(ctx); err != nil {
			if a.Ctx.Err() == nil && ctx.Err() != nil {
				return fmt.Errorf("barrier %s still set after %v", path, o.timeout)
			}
			return fmt.Errorf("waiting for the barrier %s: %w", path, err)
		}
		a.Log.Debug("barrier passed", "path", path, "waited", time.Since(start))
	}
	return nil
}

func runDoubleBarrier(ctx context.Context, a *app, sess *zkcoord.Session, path string, members int, timeout time.Duration, cmdArgs []string) error {
	d, err := barrier.NewDouble(sess, path, members)
	if err != nil {
		return cli.Usagef("barrier enter: %v", err)
	}
	if err := d.Enter(ctx); err != nil {
		if a.Ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("the double barrier %s did not gather %d members within %v", path, members, timeout)
		}
		return fmt.Errorf("entering the double barrier %s: %w", path, err)
	}
	a.Log.Info("entered", "path", path, "members", members)
	status := 0
	if len(cmdArgs) > 0 {
		c, err := supervise.Start(supervise.Spec{Name: cmdArgs[0], Argv: cmdArgs, Env: []string{"ZKCOORD_PATH=" + path}})
		if err != nil {
			return err
		}
		select {
		case <-c.Done():
		case <-a.Ctx.Done():
			c.Stop(10*time.Second, nil, nil)
		}
		status = c.Status()
	} else {
		a.printf("entered %s\n", path)
	}
	lctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
	defer cancel()
	if a.Ctx.Err() != nil {
		lctx = a.Ctx // interrupted: leave, but do not wait for the others
	}
	if err := d.Leave(lctx); err != nil && a.Ctx.Err() == nil {
		return fmt.Errorf("leaving the double barrier %s: %w", path, err)
	}
	return cli.ExitStatus(status)
}
