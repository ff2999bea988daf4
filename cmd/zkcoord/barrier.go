package main

import (
	"context"
	"fmt"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/barrier"
	"github.com/zkcoord/zkcoord/cmd/zkcoord/internal/supervise"
)

var barrierCommand = &command{
	name:     "barrier",
	synopsis: "set|remove|wait|check|enter PATH [FLAGS] [-- CMD...]",
	brief:    "set|remove|wait|check|enter PATH",
	summary:  "hold processes back until a barrier is removed; run CMD in a double barrier",
	help: `
  barrier set PATH      raise the barrier (create its node)
  barrier remove PATH   lower it, releasing every waiter
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
	runsCommand: true,
	run:         runBarrier,
}

func runBarrier(a *app, cmd *command, args []string) error {
	sub, fs, args, err := a.subFlags(cmd, args, "set", "remove", "wait", "check", "enter")
	if err != nil {
		return err
	}
	timeout := fs.Duration("timeout", 0, "wait, enter: give up (exit 1) after this `duration`; 0 waits for ever")
	members := fs.Int("members", 0, "enter: `n`, the number of members of the double barrier")
	ephemeral := fs.Bool("ephemeral", false, "set: the barrier falls when this process ends; hold it until interrupted")
	path, cmdArgs, err := fs.pathArg(args)
	if err != nil {
		return err
	}
	if sub == "enter" && *members < 1 {
		return usagef("barrier enter: --members must be at least 1")
	}
	if len(cmdArgs) > 0 && sub != "enter" {
		return usagef("barrier %s: runs no command", sub)
	}
	sess, err := a.open()
	if err != nil {
		return err
	}
	defer closeSession(sess)
	var (
		ctx    context.Context
		cancel context.CancelFunc
	)
	switch {
	case (sub == "wait" || sub == "enter") && *timeout > 0:
		ctx, cancel = context.WithTimeout(a.ctx, *timeout)
	case sub == "wait" || sub == "enter":
		ctx, cancel = context.WithCancel(a.ctx) // waits for ever
	default:
		ctx, cancel = a.opContext(sess)
	}
	defer cancel()

	if sub == "enter" {
		return runDoubleBarrier(ctx, a, sess, path, *members, cmdArgs)
	}
	var opts []barrier.Option
	if *ephemeral {
		opts = append(opts, barrier.WithEphemeral())
	}
	b, err := barrier.New(sess, path, opts...)
	if err != nil {
		return usagef("barrier: %v", err)
	}
	switch sub {
	case "set":
		if err := b.Set(ctx); err != nil {
			return fmt.Errorf("setting the barrier %s: %w", path, err)
		}
		if *ephemeral {
			a.printf("barrier %s set; holding it until interrupted\n", path)
			select {
			case <-a.ctx.Done():
				return nil
			case <-sess.Done():
				return lostf("the session ended, and the barrier with it: %v", sess.Err())
			}
		}
	case "remove":
		if err := b.Remove(ctx); err != nil {
			return fmt.Errorf("removing the barrier %s: %w", path, err)
		}
	case "check":
		set, err := b.IsSet(ctx)
		if err != nil {
			return err
		}
		if !set {
			return &exitError{code: exitFailure}
		}
	case "wait":
		start := time.Now()
		if err := b.Wait(ctx); err != nil {
			if a.ctx.Err() == nil && ctx.Err() != nil {
				return fmt.Errorf("barrier %s still set after %v", path, *timeout)
			}
			return fmt.Errorf("waiting for the barrier %s: %w", path, err)
		}
		a.log.Debug("barrier passed", "path", path, "waited", time.Since(start))
	}
	return nil
}

func runDoubleBarrier(ctx context.Context, a *app, sess *zkcoord.Session, path string, members int, cmdArgs []string) error {
	d, err := barrier.NewDouble(sess, path, members)
	if err != nil {
		return usagef("barrier enter: %v", err)
	}
	if err := d.Enter(ctx); err != nil {
		return fmt.Errorf("entering the double barrier %s: %w", path, err)
	}
	a.log.Info("entered", "path", path, "members", members)
	status := 0
	if len(cmdArgs) > 0 {
		c, err := supervise.Start(supervise.Spec{Name: cmdArgs[0], Argv: cmdArgs, Env: []string{"ZKCOORD_PATH=" + path}})
		if err != nil {
			return err
		}
		select {
		case <-c.Done():
		case <-a.ctx.Done():
			c.Stop(10*time.Second, supervise.Owner{})
		}
		status = c.Status()
	} else {
		a.printf("entered %s\n", path)
	}
	lctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
	defer cancel()
	if a.ctx.Err() != nil {
		lctx = a.ctx // interrupted: leave, but do not wait for the others
	}
	if err := d.Leave(lctx); err != nil && a.ctx.Err() == nil {
		return fmt.Errorf("leaving the double barrier %s: %w", path, err)
	}
	return exitStatus(status)
}
