package main

import "github.com/spf13/cobra"

// The demo is built into zkcoord-demo, the same program built with the
// build tag "demo" (make demo), so that the zkcoord binary does not link the
// oracle that checks the demo's verdict. Without the tag, "zkcoord demo"
// runs zkcoord-demo (see demo_exec.go); its help is the same.

// demoProgram is the name of the program that plays the demo.
const demoProgram = "zkcoord-demo"

func newDemoCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:         "demo [--zk SERVERS] [--workers N] [--resources N] [--plain] [--ui ADDR]",
		Short:       "watch workers share resources while things go wrong (starts its own ZooKeeper)",
		Annotations: brief(""),
		Long: `
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
`,
	}
	setUpDemo(a, cmd)
	return cmd
}
