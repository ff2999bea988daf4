package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/internal/groupwatch"
	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/metrics"
	"github.com/zkcoord/zkcoord/rebalance"
	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

func newRebalanceCommand(a *app) *cobra.Command {
	var o rebalanceOptions
	cmd := &cobra.Command{
		Use:         "rebalance GROUP --exec 'CMD {resource}' [FLAGS]  or  rebalance GROUP [FLAGS] -- CMD {resource}...",
		Short:       "join a group; run one CMD per resource this worker is given",
		Annotations: brief("GROUP --exec 'CMD {resource}'"),
		Long: `
Join the rebalancing group GROUP as a worker. The group's resources (register
them with 'zkcoord resources add') are shared evenly among the workers alive;
for each resource given to this worker, one CMD process runs, with {resource}
replaced by the resource's id.

A resource's CMD starts only after this worker holds the resource's barrier
node, which the previous owner deletes only after its own CMD has exited; so
no two workers ever run the same resource at once. When the resource moves
away, CMD is stopped (SIGTERM to its processes, SIGKILL after --grace) and
waited for before the barrier is released. Every CMD is stopped before the
server can expire the session, whatever --grace says: if the session is lost,
in the rest of the session timeout (so keep --grace short or the session
timeout long), and the worker joins again with a new session.

CMD's processes are CMD and every process it starts: on Linux also those
that leave its process group or session (setsid, a double fork, a daemon);
on other Unix systems those of its process group only. Whatever CMD leaves
running when it exits is killed. The barrier is released only once they are
all gone, and if zkcoord dies, even by SIGKILL, they are killed at once.

With --lock-delay D, a worker waits D before it starts the CMD of a resource
whose previous barrier was not released cleanly (its worker's session
expired, or the barrier was deleted by hand): a worker paused past its
session timeout (GC, a stopped VM) has that time to wake and stop its CMD.
After a clean handover it does not wait, nor at the first start of a
resource added by 'zkcoord resources add'. Every worker records its
releases, with the flag or without; take D longer than the longest pause a
worker may suffer.

A CMD that exits is restarted as --restart says: always, on-failure (exit
status other than 0, the default) or never; restarts wait --restart-delay,
doubling up to a minute while CMD keeps failing. A resource whose CMD is not
restarted stays with this worker, idle. After --max-restarts restarts of one
resource, the worker gives up: it leaves the group, so that others take over
its resources, and exits with status 1.

--exec runs CMD through /bin/sh -c if it uses shell syntax, directly otherwise.
Under the shell, {resource} becomes "$ZKCOORD_RESOURCE", so a resource name
is always one word and never shell code; it may stand inside double quotes,
not inside single quotes. After "--", CMD and its arguments are run directly.

A worker's --weight is its capacity: resources are shared in proportion to
the weights of the workers (a worker of weight 2 gets twice the share of one
of weight 1). Workers that give none, also those of older versions, weigh 1.

Modes (--mode, the same for every worker of a group):
  incremental       only resources that change owner stop (default)
  resource-barrier  every resource stops on every rebalancing, then restarts
  global-barrier    the coordinator stops and restarts the whole group in phases

CMD runs with:
  ZKCOORD_RESOURCE    the resource id
  ZKCOORD_TOKEN       fencing token (creation zxid of the resource's barrier):
                      larger for every later owner of the resource
  ZKCOORD_GROUP       GROUP
  ZKCOORD_PATH        the group's node
  ZKCOORD_ID          this worker's client id in the group
  ZKCOORD_GENERATION  the allocation that gave the resource to this worker

Example:
  zkcoord resources add orders partition-0 partition-1 partition-2
  zkcoord rebalance orders --exec 'consume --partition {resource} --token $ZKCOORD_TOKEN'
`,
		Args: func(cmd *cobra.Command, args []string) error {
			pos, _ := splitCommand(cmd, args)
			if err := wantArgs(cmd, pos, "GROUP"); err != nil {
				return err
			}
			return checkGroup(cmd, pos[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			pos, cmdArgs := splitCommand(cmd, args)
			o.group, o.args = pos[0], cmdArgs
			return runRebalance(a, &o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.exec, "exec", "", "`command` to run for each resource; {resource} is replaced by its id")
	fs.StringVar(&o.modeName, "mode", "incremental", "rebalancing `mode`: incremental, resource-barrier or global-barrier")
	fs.StringVar(&o.root, "root", rebalance.DefaultRoot, "`path` under which groups live")
	fs.StringVar(&o.name, "name", "", "worker `name` shown by status (default: host name and process id)")
	fs.DurationVar(&o.grace, "grace", 5*time.Second, "after SIGTERM, wait this long for CMD to exit before SIGKILL")
	fs.StringVar(&o.restart, "restart", "on-failure", "restart `policy` of an exited CMD: always, on-failure or never")
	fs.DurationVar(&o.restartDelay, "restart-delay", time.Second, "wait before the first restart (doubles while CMD keeps failing)")
	fs.IntVar(&o.maxRestarts, "max-restarts", 0, "give up after `n` restarts of one resource's CMD (0: never give up)")
	fs.DurationVar(&o.minInterval, "min-interval", rebalance.DefaultMinInterval, "as coordinator, start rebalancings at least this far apart")
	fs.DurationVar(&o.startDelay, "start-delay", 0, "wait this long after taking a resource's barrier before starting CMD")
	fs.DurationVar(&o.lockDelay, "lock-delay", 0, "wait this `duration` before starting CMD when the resource's last barrier was not released cleanly")
	fs.Int64Var(&o.weight, "weight", 1, "this worker's capacity: workers get resources in proportion to their `weight` (1 to 1000000)")
	fs.BoolVar(&o.noRecover, "no-recover", false, "exit with status 3 when the session is lost, instead of joining again")
	fs.BoolVar(&o.events, "events", false, "print acquire and release events on standard output, for test harnesses (CMD's output then goes to standard error)")
	completeWords(cmd, "mode", "incremental", "resource-barrier", "global-barrier")
	completeWords(cmd, "restart", "always", "on-failure", "never")
	return cmd
}

// rebalanceOptions are the arguments and flags of rebalance.
type rebalanceOptions struct {
	group, root  string
	exec         string // --exec, parsed into tmpl
	modeName     string // --mode, parsed into mode
	mode         rebalance.Mode
	name         string
	tmpl         commandTemplate
	args         []string // command after "--"
	grace        time.Duration
	restart      string
	restartDelay time.Duration
	maxRestarts  int
	minInterval  time.Duration
	startDelay   time.Duration
	lockDelay    time.Duration
	weight       int64
	noRecover    bool
	events       bool
}

func runRebalance(a *app, o *rebalanceOptions) error {
	var err error
	switch {
	case o.exec != "" && len(o.args) > 0:
		return cli.Usagef("rebalance: give the command either with --exec or after --, not both")
	case o.exec != "":
		if o.tmpl, err = parseTemplate(o.exec, "resource"); err != nil {
			return cli.Usagef("rebalance: --exec: %v", err)
		}
	case len(o.args) == 0:
		return cli.Usagef("rebalance: missing the command to run (--exec 'CMD {resource}' or -- CMD {resource})")
	}
	if o.mode, err = rebalance.ParseMode(o.modeName); err != nil {
		return cli.Usagef("rebalance: --mode: %v", err)
	}
	switch o.restart {
	case "always", "on-failure", "never":
	default:
		return cli.Usagef("rebalance: --restart: want always, on-failure or never, not %q", o.restart)
	}
	if o.maxRestarts < 0 || o.restartDelay < 0 || o.grace < 0 || o.minInterval < 0 || o.startDelay < 0 || o.lockDelay < 0 {
		return cli.Usagef("rebalance: durations and counts must not be negative")
	}
	if o.weight < 1 || o.weight > alloc.MaxWeight {
		return cli.Usagef("rebalance: --weight: want 1 to %d, not %d", alloc.MaxWeight, o.weight)
	}
	if o.name == "" {
		h, _ := os.Hostname()
		o.name = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	if err := a.Setup(); err != nil {
		return err
	}
	return newWorker(a, o).run()
}

// worker is one member of a group running a child per resource.
type worker struct {
	a      *app
	o      *rebalanceOptions
	em     *event.Emitter // with --events
	giveUp chan error     // a resource's CMD failed too often
	runs   *runSet
}

func newWorker(a *app, o *rebalanceOptions) *worker {
	w := &worker{a: a, o: o, giveUp: make(chan error, 1)}
	if o.events {
		w.em = event.NewEmitter(a.Stdout, o.name)
	}
	w.runs = newRunSet(w)
	return w
}

// run joins the group, session after session (a.supervise), until
// interrupted or a failure that joining again cannot cure.
func (w *worker) run() error {
	a, o := w.a, w.o
	joined := false // work runs on Supervise's goroutine only
	err := a.supervise(a.Ctx, func(_ context.Context, sess *zkcoord.Session) error {
		joined = true
		return w.runSession(sess)
	}, zkcoord.WithRestartIf(func(err error) bool {
		var ee *cli.ExitError
		if errors.As(err, &ee) || o.noRecover || !recoverable(err) {
			return false
		}
		a.Log.Warn("lost the group membership; joining again with a new session", "group", o.group, "err", err)
		return true
	}))
	var ee *cli.ExitError
	switch {
	case err == nil || a.Ctx.Err() != nil:
		return nil
	case !joined || errors.As(err, &ee):
		return err
	case o.noRecover:
		return cli.Lostf("left the group %s: %v", o.group, err)
	}
	return fmt.Errorf("left the group %s: %w", o.group, err)
}

// recoverable reports whether joining again with a new Session may cure err.
func recoverable(err error) bool {
	switch {
	case errors.Is(err, rebalance.ErrHandler), errors.Is(err, rebalance.ErrInvalidOption),
		errors.Is(err, zkcoord.ErrAuthFailed), errors.Is(err, zkcoord.ErrNoAuth),
		errors.Is(err, zkcoord.ErrBadData), errors.Is(err, alloc.ErrCorrupt):
		return false
	}
	return true
}

// runSession is one membership of the group, on one Session. It returns nil
// when interrupted, an *cli.ExitError when the worker must end, and the cause of
// the end of the membership otherwise.
func (w *worker) runSession(sess *zkcoord.Session) error {
	a, o := w.a, w.o
	ctx, cancel := context.WithCancel(a.Ctx)
	defer cancel()
	h := rebalance.Handler{
		Assigned: func(ctx context.Context, as rebalance.Assignment) error {
			w.runs.start(ctx, sess, as)
			return nil
		},
		Unassigned: func(as rebalance.Assignment, cause error) error {
			w.runs.stop(as, cause)
			return nil
		},
	}
	opts := []rebalance.Option{rebalance.WithMode(o.mode), rebalance.WithName(o.name),
		rebalance.WithMinInterval(o.minInterval), rebalance.WithStartDelay(o.startDelay), rebalance.WithLockDelay(o.lockDelay), rebalance.WithLogger(a.Log),
		rebalance.WithWeight(o.weight)}
	c, err := rebalance.Start(ctx, sess, zkcoord.Join(o.root, o.group), h, opts...)
	if err != nil {
		if a.Ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, rebalance.ErrInvalidOption) {
			return cli.Usagef("rebalance: %v", err)
		}
		return err
	}
	a.Log.Info("joined the group", "group", o.group, "client", c.ID(), "mode", o.mode.String())
	go w.observe(ctx, sess, c)
	stop := func() {
		sctx, scancel := context.WithTimeout(context.Background(), sess.Timeout()+o.grace+10*time.Second)
		defer scancel()
		if err := c.Stop(sctx); err != nil {
			a.Log.Warn("leaving the group", "err", err)
		}
	}
	select {
	case <-a.Ctx.Done():
		a.Log.Info("leaving the group", "group", o.group)
		stop()
		return nil
	case err := <-w.giveUp:
		a.Log.Error("giving up: leaving the group", "group", o.group, "err", err)
		stop()
		return &cli.ExitError{Code: cli.ExitFailure, Err: err}
	case <-c.Done():
		err := c.Err()
		if err == nil {
			err = sess.Err()
		}
		if err == nil {
			err = errors.New("client ended")
		}
		return err
	}
}

// observe keeps the metrics of the worker: its number of resources, and,
// while it is the coordinator (zkcoord_leader for the group's path), the
// group's rebalancings and how long they take (read from the group through
// watches).
func (w *worker) observe(ctx context.Context, sess *zkcoord.Session, c *rebalance.Client) {
	a, o := w.a, w.o
	if _, off := a.Rec.(metrics.Nop); off {
		return
	}
	var stopWatching func() // set while watching the group
	defer func() {
		if stopWatching != nil {
			stopWatching()
		}
	}()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		coord := c.State() == rebalance.Coordinator
		switch {
		case coord && stopWatching == nil:
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			stopWatching = func() { cancel(); <-done }
			go func() {
				defer close(done)
				// A worker becomes coordinator at any time: what it
				// finds settled was rebalanced before it looked.
				eps := groupwatch.Episodes{Joined: true}
				path := zkcoord.Join(o.root, o.group)
				defer a.Rec.Leading(path, false)
				first := true
				_ = groupwatch.Watch(wctx, sess, o.root, o.group, func(s groupwatch.Snapshot) {
					if first {
						// Coordinating, and watching the group.
						a.Rec.Leading(path, true)
						first = false
					}
					if e := eps.Observe(s); e != nil {
						a.Rec.Rebalanced(o.group, e.Duration())
						a.Log.Info("rebalanced", "group", o.group, "change", e.Trigger, "moved", e.Moved,
							"took", e.Duration().Round(time.Millisecond), "generation", e.Generation)
					}
				})
			}()
		case !coord && stopWatching != nil:
			stopWatching()
			stopWatching = nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		case <-c.Done():
			return
		}
	}
}

// childEnv is the environment of a resource's CMD.
func (w *worker) childEnv(as rebalance.Assignment) []string {
	return []string{
		"ZKCOORD_RESOURCE=" + as.Resource,
		"ZKCOORD_TOKEN=" + strconv.FormatInt(as.Token, 10),
		"ZKCOORD_GROUP=" + w.o.group,
		"ZKCOORD_PATH=" + zkcoord.Join(w.o.root, w.o.group),
		"ZKCOORD_ID=" + as.Client,
		"ZKCOORD_GENERATION=" + strconv.FormatInt(as.Generation, 10),
	}
}

// childArgv is the command line of a resource's CMD.
func (w *worker) childArgv(resource string) []string {
	vals := map[string]string{"resource": resource}
	if len(w.o.args) > 0 {
		return expandArgs(w.o.args, vals)
	}
	return w.o.tmpl.argv(vals)
}
