package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/counter"
)

var counterCommand = &command{
	name:     "counter",
	synopsis: "get|set|add PATH [VALUE]",
	brief:    "get|set|add PATH",
	summary:  "read or change a shared 32-bit counter",
	help: `
  counter get PATH         print the count
  counter set PATH VALUE   set the count
  counter add PATH DELTA   add DELTA (may be negative) and print the new count

The counter is Apache Curator's SharedCount (a 4-byte big-endian integer), so
Java and Python (Kazoo) processes can share it. Concurrent adds never lose an
update; an add that would overflow 32 bits fails. set and add create a missing
counter (and its parents) with the value of --seed; get creates nothing: on a
missing counter it says so and exits 1. An empty counter node reads as --seed.
`,
	run: runCounter,
}

func runCounter(a *app, cmd *command, args []string) error {
	sub, fs, args, err := a.subFlags(cmd, args, "get", "set", "add")
	if err != nil {
		return err
	}
	seed := fs.Int("seed", 0, "the `value` a missing counter starts from")
	pos, _, err := fs.parse(args)
	if err != nil {
		return err
	}
	var value int32
	if sub == "get" {
		err = fs.args(pos, "PATH")
	} else {
		err = fs.args(pos, "PATH", "VALUE")
		if err == nil {
			v, perr := strconv.ParseInt(pos[1], 10, 32)
			if perr != nil {
				return usagef("counter %s: %q is not a 32-bit integer", sub, pos[1])
			}
			value = int32(v)
		}
	}
	if err != nil {
		return err
	}
	path := pos[0]
	if err := zkcoord.ValidatePath(path); err != nil {
		return usagef("counter: %v", err)
	}
	if int64(*seed) != int64(int32(*seed)) {
		return usagef("counter: --seed is not a 32-bit integer")
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	c, err := counter.New(sess, path, counter.WithSeed(int32(*seed)))
	if err != nil {
		return usagef("counter: %v", err)
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
	a.printf("%d\n", cnt.Value)
	return nil
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
