package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/zkcoord/internal/supervise"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/failover"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/internal/gate"
)

func newElectCommand(a *app) *cobra.Command {
	var o electOptions
	cmd := &cobra.Command{
		Use:         "elect PATH [--id ID] [--fence CMD] [FLAGS] [-- CMD [ARG...]]",
		Short:       "stand by; run CMD while leader, stop it on loss",
		Annotations: brief("PATH -- CMD..."),
		Long: `
Join the election at PATH and wait. While this process leads, run CMD; when
leadership is lost, stop CMD (SIGTERM to its processes, SIGKILL after
--grace, or at once if another leader may already act). When CMD ends by
itself, leave the election and exit with its status. SIGINT and SIGTERM stop
CMD and leave the election. Whatever --grace says, CMD is killed before
ZooKeeper can expire the session.

What follows a loss depends on its cause:
  - the session was lost or expired (ZooKeeper out of reach for longer than
    the session allows): once CMD is stopped, zkcoord stands by again with
    a new session as soon as a server answers - a new candidacy, with a
    new, larger token - and runs CMD again when it leads again. With
    --no-recover it exits instead: status 3 if it was leading, 1 if it was
    standing by.
  - leadership was lost with the session alive (a newer leader took over,
    or the node was deleted): zkcoord exits with status 3, or with --rejoin
    stands by again.
A connection lost for less than that changes nothing: the leader leads on.
If ZooKeeper cannot be reached within --connect-timeout at the start,
zkcoord exits with status 1.

CMD's processes are CMD and every process it starts: on Linux also those
that leave its process group or session (setsid, a double fork, a daemon);
on other Unix systems those of its process group only. Whatever CMD leaves
running when it exits is killed. Leadership is given up only once they are
all gone, and if zkcoord dies, even by SIGKILL, they are killed at once.

The election is Apache Curator's LeaderLatch at PATH, so Java services using
Curator can take part.

With --fence FENCE, the election is an active/standby failover group (package
failover, under PATH): before it becomes active, a process runs FENCE against
the previous active process if that one did not stop cleanly (it crashed, or
lost its session while running), and becomes active only if FENCE exits 0.
FENCE runs with ZKCOORD_PREV_ID, ZKCOORD_PREV_TOKEN, ZKCOORD_PREV_SESSION and
ZKCOORD_PREV_DATA (the previous active's --data; with the default data also
ZKCOORD_PREV_HOST and ZKCOORD_PREV_PID), so that it can kill that process or cut
its access. A process standing by again after its own session loss does not
fence itself: its CMD was stopped before it stood again. Every member of one
group must agree on using --fence.

With --health HEALTH, zkcoord runs HEALTH every --health-interval (giving it
that long; a non-zero exit is a failure). After --health-failures failures in
a row it steps down - stops CMD as on the loss of leadership, then resigns -
or, standing by, leaves the election; it stands again after the first check
that passes. With --fence, this is failover's health check.

With --lock-delay D, zkcoord waits D before it leads (or, with --fence,
before it fences and becomes active) when the last leader did not leave
cleanly (its session expired, or its node was deleted): a leader paused past
its session timeout (GC, a stopped VM) has that time to wake and stop its CMD.
Leaders with --lock-delay mark their resignations; after a resignation by
Curator, Kazoo or a zkcoord without the flag, the delay is waited too. Take
it longer than the longest pause a leader may suffer.

With --revocable, a request to step down ('zkcoord election revoke PATH';
Election.Revoke in Go, on PATH/lock for a group run with --fence) stops CMD as
SIGTERM does, resigns and exits with CMD's status (without CMD, 0), and the
next in line leads. Without it, requests are ignored.

Without CMD, zkcoord prints a line each time it becomes leader ("leader PATH
id ID term T token N"; with --json one line of JSON: path, id, term, token)
and leads until it is interrupted or loses leadership.

CMD runs with:
  ZKCOORD_TOKEN  fencing token: larger for every later leader
  ZKCOORD_TERM   the leader's term
  ZKCOORD_ID     this participant's id
  ZKCOORD_PATH   PATH

Examples:
  zkcoord elect /services/billing --id "$(hostname)" -- ./billing-server
  zkcoord elect /services/billing --health 'curl -fs localhost:8080/health' -- ./billing-server
  zkcoord elect /services/billing --fence 'ssh "$ZKCOORD_PREV_HOST" kill -9 "$ZKCOORD_PREV_PID"' -- ./billing-server
`,
		Args: pathThenCommand,
		RunE: func(cmd *cobra.Command, args []string) error {
			pos, cmdArgs := splitCommand(cmd, args)
			o.path, o.cmd = pos[0], cmdArgs
			return runElect(a, &o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.id, "id", "", "participant `id` (default: host name, process id and a random suffix)")
	fs.StringVar(&o.fence, "fence", "", "failover: run `FENCE` against the previous active before becoming active")
	fs.DurationVar(&o.fenceTimeout, "fence-timeout", time.Minute, "give FENCE at most this `duration`")
	fs.StringVar(&o.data, "data", "", "`data` the active publishes for FENCE (default: host and pid as JSON)")
	fs.DurationVar(&o.grace, "grace", 10*time.Second, "after SIGTERM, wait this long for CMD to exit before SIGKILL")
	fs.BoolVar(&o.asJSON, "json", false, "without CMD: print each leadership as one line of JSON (path, id, term, token)")
	fs.BoolVar(&o.rejoin, "rejoin", false, "also after a loss of leadership with the session alive (deposed, node deleted), stand by again instead of exiting with status 3")
	fs.BoolVar(&o.noRecover, "no-recover", false, "when the session is lost, exit (status 3 if leading) instead of standing by again with a new session")
	fs.BoolVar(&o.revocable, "revocable", false, "step down when asked ('zkcoord election revoke'): stop CMD, resign and exit with its status")
	fs.StringVar(&o.health, "health", "", "run `HEALTH` every --health-interval; while it fails, step down or do not stand")
	fs.DurationVar(&o.healthInterval, "health-interval", 5*time.Second, "run HEALTH this often, giving it this long (a `duration`)")
	fs.IntVar(&o.healthFailures, "health-failures", 3, "step down after `n` failed health checks in a row")
	fs.DurationVar(&o.lockDelay, "lock-delay", 0, "wait this `duration` before leading when the last leader's session expired")
	return cmd
}

// electOptions are the arguments and flags of elect.
type electOptions struct {
	path         string
	id           string
	fence        string
	fenceTimeout time.Duration
	data         string
	grace        time.Duration
	rejoin       bool
	noRecover    bool
	revocable    bool
	lockDelay    time.Duration
	asJSON       bool
	cmd          []string

	health         string
	healthInterval time.Duration
	healthFailures int
	gate           *gate.Health // with --health and without --fence

	// stopped is the token of this process's last activation with --fence,
	// once its command was stopped: a new Session's activation need not
	// fence it.
	stopped atomic.Int64
}

// electResult is how one session's worth of election ended.
type electResult struct {
	err      error // what to return if not rejoining
	lost     bool  // leadership (or the session) was lost: rejoining makes sense
	sessOK   bool  // the session still lives
	stepDown bool  // the health check failed: stand again once it passes
	revoked  bool  // asked to step down (--revocable): stepped down cleanly
}

func runElect(a *app, o *electOptions) error {
	if o.noRecover && o.rejoin {
		return cli.Usagef("elect: --no-recover and --rejoin contradict each other: give one")
	}
	if o.lockDelay < 0 {
		return cli.Usagef("elect: --lock-delay must not be negative")
	}
	if o.id == "" {
		h, _ := os.Hostname()
		o.id = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	if o.data == "" {
		h, _ := os.Hostname()
		b, _ := json.Marshal(activeData{Host: h, PID: os.Getpid(), ID: o.id})
		o.data = string(b)
	}
	var fenceCmd commandTemplate
	if o.fence != "" {
		t, err := parseTemplate(o.fence)
		if err != nil {
			return cli.Usagef("elect: --fence: %v", err)
		}
		fenceCmd = t
	}
	var healthOpt []failover.Option
	if o.health != "" {
		t, err := parseTemplate(o.health)
		if err != nil {
			return cli.Usagef("elect: --health: %v", err)
		}
		if o.healthInterval <= 0 || o.healthFailures < 1 {
			return cli.Usagef("elect: --health-interval must be positive and --health-failures at least 1")
		}
		check := healthCheck(a, o, t)
		if o.fence != "" {
			healthOpt = append(healthOpt, failover.WithHealthCheck(check, o.healthInterval, o.healthFailures))
		} else {
			o.gate = newHealthGate(check, o.healthInterval, o.healthFailures, func(msg string, args ...any) { a.Log.Warn(msg, args...) })
		}
	}
	if len(o.cmd) > 0 {
		if _, err := supervise.Find(o.cmd); err != nil {
			return fmt.Errorf("elect: %w (no candidacy was started)", err)
		}
	}
	if err := a.Setup(); err != nil {
		return err
	}
	if o.gate != nil {
		gctx, stop := context.WithCancel(a.Ctx)
		defer stop()
		go o.gate.Run(gctx)
	}

	// Each Session stands for election until the outcome is decided: then
	// work returns errDecided, and Supervise returns it. After a session
	// loss that calls for standing by again, work returns errStandAgain
	// and Supervise runs it again on a new Session: a new candidacy, a
	// new token, once the command of the old one was stopped.
	var final error
	err := a.supervise(a.Ctx, func(_ context.Context, sess *zkcoord.Session) error {
		res := electSession(a, sess, o, fenceCmd, healthOpt)
		if res.lost && !res.sessOK && !o.noRecover && a.Ctx.Err() == nil {
			a.Log.Warn("the session ended: standing by again with a new session", "path", o.path, "err", res.err)
			return errStandAgain
		}
		final = res.err
		return errDecided
	}, zkcoord.WithRestartIf(func(err error) bool { return errors.Is(err, errStandAgain) }))
	switch {
	case errors.Is(err, errDecided) || a.Ctx.Err() != nil:
		return final
	case err != nil:
		return err
	}
	return final
}

// The outcomes of one Session's election.
var (
	errDecided    = errors.New("elect: decided")
	errStandAgain = errors.New("elect: stand by again")
)

// electSession stands for election on one Session until the outcome is
// decided or, after a loss, standing by again needs a new Session. On a
// live Session it stands by again after a step-down for health, and with
// --rejoin after a loss of leadership.
func electSession(a *app, sess *zkcoord.Session, o *electOptions, fenceCmd commandTemplate,
	healthOpt []failover.Option) electResult {
	for {
		var res electResult
		if o.fence != "" {
			res = electFailover(a, sess, o, fenceCmd, healthOpt...)
		} else {
			res = electPlain(a, sess, o)
		}
		if !(res.stepDown || res.lost && o.rejoin) || !res.sessOK || a.Ctx.Err() != nil {
			return res
		}
		a.Log.Info("standing by again", "path", o.path)
	}
}

// activeData is the default --data: how FENCE finds the previous active.
type activeData struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	ID   string `json:"id"`
}

// electPlain campaigns once on the election at o.path and runs the command
// while leading.
func electPlain(a *app, sess *zkcoord.Session, o *electOptions) electResult {
	e, err := election.New(sess, o.path, election.WithID(o.id), election.WithLogger(a.Log), election.WithLockDelay(o.lockDelay))
	if err != nil {
		return electResult{err: cli.Usagef("elect: %v", err)}
	}
	ctx := a.Ctx
	if o.gate != nil {
		if o.gate.Wait(a.Ctx) != nil {
			return electResult{}
		}
		var cancel context.CancelFunc
		ctx, cancel = o.gate.While(a.Ctx, failover.ErrUnhealthy)
		defer cancel()
	}
	a.Log.Info("standing by", "path", o.path, "id", o.id)
	lead, err := e.Campaign(ctx)
	if err != nil {
		if a.Ctx.Err() != nil {
			return electResult{}
		}
		if errors.Is(context.Cause(ctx), failover.ErrUnhealthy) {
			a.Log.Warn("health check failing: not standing", "path", o.path)
			return electResult{lost: true, sessOK: sess.Err() == nil, stepDown: true}
		}
		if errors.Is(err, zkcoord.ErrSequenceWrapped) || errors.Is(err, election.ErrOtherElection) {
			return electResult{err: fmt.Errorf("campaigning in %s: %w%s", o.path, err, otherWay(err, true))} // standing again cannot help
		}
		return electResult{err: fmt.Errorf("campaigning in %s: %w", o.path, err), lost: true, sessOK: sess.Err() == nil}
	}
	resign := func() {
		ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
		defer cancel()
		if err := lead.Resign(ctx); err != nil && sess.Err() == nil {
			a.Log.Warn("resigning", "path", o.path, "err", err)
		}
	}
	a.Rec.Leading(o.path, true)
	defer a.Rec.Leading(o.path, false)
	a.Log.Info("leading", "path", o.path, "id", lead.ID(), "term", lead.Term(), "token", lead.Token())
	var own zkcoord.Ownership = lead
	if o.gate != nil {
		// Leadership ends for this process when the checks fail too.
		gctx, cancel := context.WithCancelCause(lead.Context())
		defer cancel(nil)
		unhealthy := context.AfterFunc(ctx, func() {
			if err := context.Cause(ctx); errors.Is(err, failover.ErrUnhealthy) {
				cancel(err)
			}
		})
		defer unhealthy()
		own = supervise.ContextOwnership{Ctx: gctx, Fenced: lead.Fence()}
	}
	res := leadWith(a, sess, o, own, o.revokedOf(lead), lead.Term(), nil, resign)
	if res.lost && errors.Is(own.Err(), failover.ErrUnhealthy) {
		a.Log.Warn("health check failing: stepped down", "path", o.path)
		resign()
		return electResult{lost: true, sessOK: sess.Err() == nil, stepDown: true}
	}
	return res
}

// leadWith runs the command (or waits, without one) while own, the
// leadership, lasts, and reports how it ended.
func leadWith(a *app, sess *zkcoord.Session, o *electOptions, own zkcoord.Ownership,
	revoked <-chan struct{}, term int64, extraEnv []string, resign func()) electResult {
	done, cause, token := own.Done(), own.Err, own.Fence().Token
	if len(o.cmd) == 0 {
		if o.asJSON {
			a.printLine(struct {
				Path  string `json:"path"`
				ID    string `json:"id"`
				Term  int64  `json:"term"`
				Token int64  `json:"token"`
			}{o.path, o.id, term, token})
		} else {
			a.printf("leader %s id %s term %d token %d\n", o.path, o.id, term, token)
		}
		select {
		case <-a.Ctx.Done():
			resign()
			return electResult{}
		case <-revoked:
			a.Log.Info("asked to step down: resigning", "path", o.path)
			resign()
			return electResult{revoked: true}
		case <-done:
			if a.Ctx.Err() != nil {
				return electResult{}
			}
			err := cause()
			return electResult{err: cli.Lostf("lost leadership of %s: %v", o.path, err), lost: true, sessOK: sess.Err() == nil}
		}
	}
	env := append([]string{
		"ZKCOORD_TOKEN=" + strconv.FormatInt(token, 10),
		"ZKCOORD_TERM=" + strconv.FormatInt(term, 10),
		"ZKCOORD_ID=" + o.id,
		"ZKCOORD_PATH=" + o.path,
	}, extraEnv...)
	c, err := supervise.Start(supervise.Spec{Name: o.cmd[0], Argv: o.cmd, Env: env, Stdin: true})
	if err != nil {
		resign()
		return electResult{err: err}
	}
	select {
	case <-c.Done():
		resign()
		a.Log.Info("command ended; leaving the election", "how", c.Describe())
		return electResult{err: cli.ExitStatus(c.Status())}
	case <-done:
		if a.Ctx.Err() != nil { // interrupted, and leadership ended with it
			c.Stop(o.grace, sess, nil)
			resign()
			return electResult{err: cli.ExitStatus(c.Status())}
		}
		err := cause()
		g := supervise.LossGrace(sess, err, o.grace)
		if errors.Is(err, failover.ErrUnhealthy) {
			g = o.grace // still leading: no one else may act yet
		}
		a.Log.Error("leadership lost: stopping the command", "path", o.path, "err", err, "grace", g)
		c.Stop(g, sess, nil)
		return electResult{err: cli.Lostf("lost leadership of %s: %v (the command was stopped: %s)", o.path, err, c.Describe()),
			lost: true, sessOK: sess.Err() == nil}
	case <-a.Ctx.Done():
		a.Log.Info("interrupted: stopping the command", "pid", c.Pid())
		c.Stop(o.grace, sess, own)
		resign()
		return electResult{err: cli.ExitStatus(c.Status())}
	case <-revoked:
		a.Log.Info("asked to step down: stopping the command", "pid", c.Pid())
		c.Stop(o.grace, sess, own)
		resign()
		return electResult{err: cli.ExitStatus(c.Status()), revoked: true}
	}
}

// revokedOf returns the channel that tells l to step down, with
// --revocable; nil (never ready) without.
func (o *electOptions) revokedOf(l *election.Leadership) <-chan struct{} {
	if !o.revocable || l == nil {
		return nil
	}
	return l.Revoked()
}

// electFailover runs one failover.Run: fence the previous active if needed,
// then run the command while active.
func electFailover(a *app, sess *zkcoord.Session, o *electOptions, fenceCmd commandTemplate,
	opts ...failover.Option) electResult {
	fence := func(ctx context.Context, prev failover.Breadcrumb) error {
		return runFence(ctx, a, o, fenceCmd, prev)
	}
	events, stopEvents := fifo.Relay(16, func(ev failover.Event) {
		a.Log.Debug("failover", "event", ev.Type.String(), "token", ev.Token, "err", ev.Err)
	})
	defer stopEvents() // after Run returned: its last events are in the channel
	fopts := append([]failover.Option{failover.WithID(o.id), failover.WithData([]byte(o.data)), failover.WithLockDelay(o.lockDelay),
		failover.WithLogger(a.Log), failover.WithEvents(events)}, opts...)
	f, err := failover.New(sess, o.path, fence, fopts...)
	if err != nil {
		return electResult{err: cli.Usagef("elect: %v", err)}
	}
	runCtx, cancelRun := context.WithCancel(a.Ctx)
	defer cancelRun()
	var res electResult
	decided := false
	a.Log.Info("standing by", "path", o.path, "id", o.id)
	err = f.Run(runCtx, func(ctx context.Context, act failover.Activation) error {
		a.Rec.Leading(o.path, true)
		defer a.Rec.Leading(o.path, false)
		a.Log.Info("active", "path", o.path, "id", o.id, "term", act.Term, "token", act.Token, "fenced", act.Fenced)
		var extra []string
		if act.Previous != nil {
			extra = append(extra, "ZKCOORD_PREV_ID="+act.Previous.ID)
		}
		// Leadership ends when ctx does; resigning is Run's job.
		own := supervise.ContextOwnership{Ctx: ctx, Fenced: act.Fence}
		r := leadWith(a, sess, o, own, o.revokedOf(act.Leadership), act.Term, extra, func() {})
		o.stopped.Store(act.Token) // the command has ended or was stopped
		switch {
		case runCtx.Err() != nil: // interrupted: a clean stop
			res, decided = r, true
			return nil
		case r.revoked: // asked to step down, and stopped: a clean stop
			res, decided = r, true
			cancelRun()
			return nil
		case r.lost && errors.Is(context.Cause(ctx), failover.ErrUnhealthy):
			// Run steps down and stands again once the checks pass.
			a.Log.Warn("health check failing: stepped down", "path", o.path)
			return context.Cause(ctx)
		case r.lost:
			res, decided = r, true
			if !o.rejoin {
				cancelRun() // Run's clean-up cannot delete the breadcrumb: the lock is gone
			}
			return context.Cause(ctx)
		default: // the command ended by itself
			res, decided = r, true
			cancelRun()
			if r.err != nil {
				return r.err // unclean: the breadcrumb stays for the next active to fence
			}
			return nil
		}
	})
	switch {
	case decided && (!res.lost || !o.rejoin):
		return res
	case a.Ctx.Err() != nil:
		return electResult{}
	case errors.Is(err, zkcoord.ErrSequenceWrapped) || errors.Is(err, election.ErrOtherElection):
		return electResult{err: fmt.Errorf("failover %s: %w%s", o.path, err, otherWay(err, false))} // standing again cannot help
	case err != nil:
		// The session ended (standing by or active).
		return electResult{err: fmt.Errorf("failover %s: %w", o.path, err), lost: true, sessOK: sess.Err() == nil}
	}
	return res
}

// otherWay explains ErrOtherElection to the user of elect: every member
// of a group must run with --fence, or every one without.
func otherWay(err error, plain bool) string {
	if !errors.Is(err, election.ErrOtherElection) {
		return ""
	}
	if plain {
		return " (the path is led by a group run with --fence: run every member with --fence, or use another path)"
	}
	return " (the path is led by a group run without --fence: run every member without it, or use another path)"
}

// runFence runs the fencing command against the previous active.
func runFence(ctx context.Context, a *app, o *electOptions, t commandTemplate, prev failover.Breadcrumb) error {
	if prev.Token == o.stopped.Load() {
		// This process, after a session loss: FENCE would act on itself.
		a.Log.Info("the previous active was this process, its command stopped: nothing to fence", "token", prev.Token)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, o.fenceTimeout)
	defer cancel()
	data := prev.Data
	if data == nil {
		data = prev.Raw
	}
	env := []string{
		"ZKCOORD_PATH=" + o.path,
		"ZKCOORD_ID=" + o.id,
		"ZKCOORD_PREV_ID=" + prev.ID,
		"ZKCOORD_PREV_TOKEN=" + strconv.FormatInt(prev.Token, 10),
		fmt.Sprintf("ZKCOORD_PREV_SESSION=0x%x", prev.Session),
		"ZKCOORD_PREV_DATA=" + string(data),
	}
	var ad activeData
	if json.Unmarshal(prev.Data, &ad) == nil && ad.Host != "" {
		env = append(env, "ZKCOORD_PREV_HOST="+ad.Host, "ZKCOORD_PREV_PID="+strconv.Itoa(ad.PID))
	}
	a.Log.Warn("fencing the previous active", "prev", prev.ID, "token", prev.Token, "cmd", t.text)
	if err := runToEnd(ctx, supervise.Spec{Name: "fence", Argv: t.argv(nil), Env: env, Stdout: a.Stderr}, o.grace, "fence command"); err != nil {
		return err
	}
	a.Log.Info("previous active fenced", "prev", prev.ID)
	return nil
}
