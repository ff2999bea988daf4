package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/queue"
)

var queueCommand = &command{
	name:     "queue",
	synopsis: "put|take|len PATH [ITEM...] [FLAGS]",
	brief:    "put|take|len PATH",
	summary:  "put items into a distributed queue, take them out",
	help: `
  queue put PATH ITEM...   append items (with "-", one item per line of standard input)
  queue take PATH          remove the item at the head and print it; waits for one
                           (-n N: N items, taken in batches of up to 500 per transaction)
  queue len PATH           print the number of items

Items are served by priority (0 to 999, lower first; items put without
--priority count as 0), and in FIFO order within one priority. Every item is
taken by at most one taker, even when many processes take at once and
connections drop.
`,
	run: runQueue,
}

func runQueue(a *app, cmd *command, args []string) error {
	sub, fs, args, err := a.subFlags(cmd, args, "put", "take", "len")
	if err != nil {
		return err
	}
	prio := fs.Int("priority", 0, "put: item `priority`, 0 (first) to 999")
	count := fs.Int("n", 1, "take: take `n` items, one per line")
	noWait := fs.Bool("no-wait", false, "take: exit 1 at once if the queue is empty")
	timeout := fs.Duration("timeout", 0, "take: give up (exit 1) after this `duration`; 0 waits for ever")
	pos, _, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("queue %s: missing PATH", sub)
	}
	// Without --priority, items go into the plain FIFO queue, which Curator's
	// DistributedQueue can read too.
	withPriority := fs.isSet("priority")
	path, items := pos[0], pos[1:]
	if err := zkcoord.ValidatePath(path); err != nil {
		return usagef("queue: %v", err)
	}
	switch {
	case sub == "put" && len(items) == 0:
		return usagef("queue put: missing ITEM (or - for standard input)")
	case sub != "put" && len(items) > 0:
		return usagef("queue %s: unexpected argument %q", sub, items[0])
	case *prio < 0 || *prio > queue.MaxPriority:
		return usagef("queue: --priority must be in [0, 999]")
	case *count < 1:
		return usagef("queue take: -n must be at least 1")
	}
	if len(items) == 1 && items[0] == "-" {
		items = nil
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			items = append(items, sc.Text())
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading standard input: %w", err)
		}
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()

	// A PriorityQueue serves a plain Queue's items as priority 0, so it
	// can take from both kinds.
	pq, err := queue.NewPriority(sess, path)
	if err != nil {
		return usagef("queue: %v", err)
	}
	q, err := queue.New(sess, path)
	if err != nil {
		return usagef("queue: %v", err)
	}
	switch sub {
	case "put":
		for _, it := range items {
			if withPriority {
				_, err = pq.Put(ctx, *prio, []byte(it))
			} else {
				_, err = q.Put(ctx, []byte(it))
			}
			if err != nil {
				return fmt.Errorf("queue put %s: %w", path, err)
			}
		}
	case "len":
		n, err := pq.Len(ctx)
		if err != nil {
			return fmt.Errorf("queue len %s: %w", path, err)
		}
		a.printf("%d\n", n)
	case "take":
		tctx := a.ctx
		if *timeout > 0 {
			var tcancel context.CancelFunc
			tctx, tcancel = context.WithTimeout(a.ctx, *timeout)
			defer tcancel()
		}
		// Items are taken in batches (one transaction each), as many as
		// are still wanted.
		for left := *count; left > 0; {
			var got [][]byte
			if *noWait {
				got, err = pq.TryTakeN(ctx, min(left, queue.MaxBatch))
			} else {
				got, err = pq.TakeN(tctx, min(left, queue.MaxBatch))
			}
			switch {
			case errors.Is(err, queue.ErrEmpty):
				return &exitError{code: exitFailure, err: fmt.Errorf("queue %s is empty", path)}
			case err != nil && a.ctx.Err() != nil:
				return &exitError{code: exitFailure, err: errors.New("interrupted")}
			case err != nil && errors.Is(err, context.DeadlineExceeded):
				return fmt.Errorf("no item in %s within %v", path, *timeout)
			case err != nil:
				return fmt.Errorf("queue take %s: %w", path, err)
			}
			for _, data := range got {
				a.printf("%s\n", data)
			}
			left -= len(got)
		}
	}
	return nil
}
