package main

import (
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run plays the demo as the command line args say and returns the exit
// code.
func run(args []string, stdout, stderr io.Writer) int {
	a := cli.NewApp(args, stdout, stderr)
	return a.Run(func() *cobra.Command { return newDemoCommand(a) })
}

func newDemoCommand(a *cli.App) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		// Named as zkcoord users know it: "zkcoord demo" runs this program.
		Use:           "demo [--zk SERVERS] [--workers N] [--resources N] [--plain] [--ui ADDR]",
		Short:         "watch workers share resources while things go wrong (starts its own ZooKeeper)",
		Long:          demoHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cli.NoArgs("demo: unexpected argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(a, cmd, o)
		},
	}
	a.Prepare(cmd)
	cmd.SetHelpFunc(func(cc *cobra.Command, _ []string) { cli.PrintCommandHelp(cc, cc.OutOrStdout()) })
	fs := cmd.Flags()
	fs.IntVar(&o.workers, "workers", 3, "start with `n` workers (2 to 9)")
	fs.IntVar(&o.resources, "resources", 12, "start with `n` resources (1 to 99)")
	fs.DurationVar(&o.sessionTimeout, "worker-session-timeout", 4*time.Second, "session timeout of the workers")
	fs.BoolVar(&o.plain, "plain", false, "print progress lines even on a terminal")
	fs.StringVar(&o.history, "history", "", "write every recorded event and the checks to `file` (JSON)")
	fs.DurationVar(&o.pace, "pace", 0, "pause this long between steps (default 3s on a terminal, none otherwise)")
	fs.StringVar(&o.ui, "ui", "", "serve the web console of the demo's ZooKeeper on this `address` (like 127.0.0.1:8080)")
	fs.StringVar(&o.zkcoord, "zkcoord", "", "the zkcoord `program` the workers run (default: the one next to this program, or on the PATH)")
	_ = fs.MarkHidden("zkcoord") // zkcoord demo gives itself
	return cmd
}

// demoHelp is the description of the demo in its help.
const demoHelp = `
Start a few worker processes that share resources through ZooKeeper with
'zkcoord rebalance --exec', show who runs what as it changes, and break things
on purpose: add a worker, SIGKILL the coordinator, add and remove resources,
cut a worker off the network for longer than its session timeout. An oracle
collects every start and stop of a resource's process from every worker and
checks that no resource ever ran twice at the same time; the demo ends with a
summary and a verdict (exit status 0 for PASS, 1 for FAIL), and leaves nothing
running.

Without --zk, the demo starts a ZooKeeper server of its own from the Debian
package (run 'make deps' to install it) and removes it at the end. With --zk it
uses those servers (in a group named demo-<random>, deleted at the end),
and ZKCOORD_SERVERS is ignored.

When standard output is a terminal the view is redrawn in place; otherwise
(CI, pipes, --plain) the demo prints one line per event. With --ui ADDR, the
web console of the demo's ZooKeeper (as 'zkcoord ui' serves it) runs beside
the view while the demo plays; the demo prints its URL.
`
