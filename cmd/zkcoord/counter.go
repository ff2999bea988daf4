package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/counter"
)

func newCounterCommand(a *app) *cobra.Command {
	var (
		seed   int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:         "counter get|set|add PATH [VALUE] [--json]",
		Short:       "read or change a shared 32-bit counter",
		Annotations: brief("get|set|add PATH"),
		Long: `
  counter get PATH         print the count
  counter set PATH VALUE   set the count
  counter add PATH DELTA   add DELTA (may be negative) and print the new count

The counter is Apache Curator's SharedCount (a 4-byte big-endian integer), so
Java and Python (Kazoo) processes can share it. Concurrent adds never lose an
update; an add that would overflow 32 bits fails. set and add create a missing
counter (and its parents) with the value of --seed; get creates nothing: on a
missing counter it says so and exits 1. An empty counter node reads as --seed.
With --json, each prints an object: the path, the value and the version of
the counter's node.
`,
		RunE: subcommandRequired,
	}
	cmd.PersistentFlags().IntVar(&seed, "seed", 0, "the `value` a missing counter starts from")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print a JSON object: path, value, version")
	cmd.AddCommand(&cobra.Command{
		Use:   "get PATH",
		Short: "print the count",
		Args:  pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCounter(a, "get", args[0], 0, seed, asJSON)
		},
	})
	change := func(cmd *cobra.Command, args []string) error {
		if err := wantArgs(cmd, args, "PATH", "VALUE"); err != nil {
			return err
		}
		v, err := strconv.ParseInt(args[1], 10, 32)
		if err != nil {
			return cli.Usagef("%s: %q is not a 32-bit integer", cli.Title(cmd), args[1])
		}
		if err := checkPath(cmd, args[0]); err != nil {
			return err
		}
		return runCounter(a, cmd.Name(), args[0], int32(v), seed, asJSON)
	}
	addSubcommands(cmd, nil, change,
		subcommand{"set PATH VALUE", "set the count"},
		subcommand{"add PATH DELTA", "add DELTA and print the new count"})
	return cmd
}

// runCounter runs counter get, set or add (sub) on the counter at path.
func runCounter(a *app, sub, path string, value int32, seed int, asJSON bool) error {
	if int64(seed) != int64(int32(seed)) {
		return cli.Usagef("counter: --seed is not a 32-bit integer")
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	c, err := counter.New(sess, path, counter.WithSeed(int32(seed)))
	if err != nil {
		return cli.Usagef("counter: %v", err)
	}
	var cnt counter.Count
	switch sub {
	case "get":
		cnt, err = getCount(ctx, sess, c)
	case "set":
		cnt, err = c.SetCount(ctx, value)
	case "add":
		cnt, err = c.Add(ctx, value)
	}
	if err != nil {
		return fmt.Errorf("counter %s %s: %w", sub, path, err)
	}
	if asJSON {
		return a.printJSON(countJSON{Path: path, Value: cnt.Value, Version: cnt.Version})
	}
	a.printf("%d\n", cnt.Value)
	return nil
}

// countJSON is the --json form of a counter's value.
type countJSON struct {
	Path    string `json:"path"`
	Value   int32  `json:"value"`
	Version int32  `json:"version"`
}

// getCount reads the count of c, which must exist: the CLI reports a
// missing counter rather than its seed. Neither read writes anything.
func getCount(ctx context.Context, sess *zkcoord.Session, c *counter.Counter) (counter.Count, error) {
	ok, _, err := sess.Exists(ctx, c.Path())
	switch {
	case err != nil:
		return counter.Count{}, err
	case !ok:
		return counter.Count{}, errors.New("no such counter ('counter set' or 'counter add' creates one)")
	}
	return c.Get(ctx)
}
