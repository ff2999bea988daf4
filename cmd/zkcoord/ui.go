package main

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
)

func newUICommand(a *app) *cobra.Command {
	var o console.Options
	var listen string
	cmd := &cobra.Command{
		Use:         "ui [--listen ADDR] [--root PATH] [--path [KIND:]PATH ...] [--admin] [--host NAME ...]",
		Short:       "serve the live web console of the coordination state",
		Annotations: brief("[--listen ADDR]"),
		Long: `
Serve a live web console (docs/ui.md) of what is under --root: who leads,
who holds which lock and who waits, which worker of a rebalancer group runs
which resource, which service instances and group members are registered,
and what changed since it started. It prints the URL and serves until
interrupted (then exits 0). Instead of walking --root, --path (repeatable)
names the places to show: a path to walk, or KIND:PATH for a recipe of a
known kind (group, election, lock, rwlock, semaphore, queue, barrier,
double-barrier, counter, service, membership).

It rides out a ZooKeeper incident: while out of contact with ZooKeeper, the
console goes on serving the last state it knew, marked disconnected (on the
page, and "connected": false in /api/state). If the session is lost or
expires meanwhile, the console carries on with a new session once a server
answers: the page stays open, and what changed meanwhile shows as changes,
on the timeline too. zkcoord exits 1 if ZooKeeper cannot be reached within
--connect-timeout at the start.

The console only reads unless --admin is given: then it can break a lock and
add or remove a rebalancer resource, each after a typed confirmation. With
--admin the printed URL carries a key made for this run (after "#key="):
only a page opened at that URL can act, and requests from another origin
are refused. Breaking a lock deletes its holder's node; the holder may go on
running until its ZooKeeper session expires, unless it watches its lock.

The console answers only requests addressed to an IP address, "localhost",
or a name given with --host (repeatable), so that no web page can reach it
by rebinding its own host name to the console's address. It listens on the
loopback interface by default; beyond it, it has no authentication but the
admin key, so a warning is printed when --listen is not a loopback address.

Example:
  zkcoord ui --root /app --listen 127.0.0.1:8080
`,
		Args: exactly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUI(a, listen, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&listen, "listen", "127.0.0.1:8080", "serve on this `address`")
	fs.StringVar(&o.Root, "root", "/", "show the recipes under this `path`")
	fs.StringArrayVar(&o.Paths, "path", nil, "show only this `[KIND:]PATH` instead of --root (repeatable)")
	fs.BoolVar(&o.Admin, "admin", false, "allow breaking locks and changing rebalancer resources")
	fs.StringArrayVar(&o.Hosts, "host", nil, "also answer requests addressed to this host `name` (repeatable)")
	return cmd
}

// runUI serves the console with opts (the logger aside) on listen, Session
// after Session: after a session loss the console resumes with a new one.
func runUI(a *app, listen string, opts console.Options) error {
	if err := a.Setup(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	defer ln.Close()
	opts.Logger = a.Log
	ctx, fail := context.WithCancelCause(a.Ctx)
	defer fail(nil)
	var served *cli.ConsoleServer
	defer func() {
		if served != nil {
			served.Stop(a.Log)
		}
	}()
	err = a.supervise(ctx, func(ctx context.Context, sess *zkcoord.Session) error {
		if served == nil {
			c, err := cli.NewConsole(sess, opts)
			if err != nil {
				return err
			}
			s := cli.StartConsole(c, ln, func(url string) { a.printf("console at %s\n", url) }, a.Stderr)
			go func() { fail(s.Err()) }() // Err waits until serving has stopped
			served = s
		} else if err := served.Console().Resume(sess); err != nil {
			return err
		}
		<-ctx.Done()
		if sess.Err() == nil {
			// Interrupted, or serving failed: stop while the Session lives.
			served.Stop(a.Log)
		}
		return nil
	})
	switch {
	case a.Ctx.Err() != nil:
		return nil
	case ctx.Err() != nil:
		return context.Cause(ctx)
	}
	return err
}
