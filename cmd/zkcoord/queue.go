package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/internal/fanout"
	"github.com/zkcoord/zkcoord/queue"
)

// queueOptions are the flags of queue.
type queueOptions struct {
	priority int
	count    int
	noWait   bool
	timeout  time.Duration
	work     bool
	asJSON   bool
}

func newQueueCommand(a *app) *cobra.Command {
	var o queueOptions
	cmd := &cobra.Command{
		Use:         "queue put|take|len PATH [ITEM...] [FLAGS]",
		Short:       "put items into a distributed queue, take them out",
		Annotations: brief("put|take|len PATH"),
		Long: `
  queue put PATH ITEM...   append items (with "-", one item per line of standard input)
  queue take PATH          take the item at the head and print it; waits for one
                           (-n N: N items, taken in batches of up to 500)
  queue len PATH           print the number of items

A queue has one of two layouts; give --work, or not, alike to put, take
and len:

  plain (the default)  the layout of the library's Queue and PriorityQueue
      (a plain FIFO queue is Curator's DistributedQueue's). take is
      AT-MOST-ONCE: items are removed, then printed, so no item is ever
      printed twice, but a taker killed (SIGKILL, power loss) after a
      removal and before printing loses those items: up to one batch.
  --work  Kazoo's LockingQueue layout (the library's WorkQueue). take is
      AT-LEAST-ONCE: it claims items, prints them, and only then removes
      them, so no item is ever lost, but one whose taker was killed before
      removing it is printed again by the next taker (once the killed
      taker's session has expired). Use it when a lost item costs more
      than a repeated one.

The plain layout stays the default so that existing queues, and Curator
services sharing them, keep working; switching one queue's layout would
leave its items behind, unseen by the other layout.

Items are served by priority (0 to 999, lower first; items put without
--priority count as 0, or with --work as 100, Kazoo's default), and in FIFO
order within one priority. Every item is taken by at most one taker at a
time, even when many processes take at once and connections drop.

With --json, take prints each item as it takes it, as a JSON object on a
line of its own: {"data": ..., "encoding": "utf-8" or "base64"}; len prints
{"path": ..., "len": N}.

put reads all of standard input before it puts anything: a line of 1 MiB or
more (more than a node holds) fails the command with nothing put. If a put
fails midway, the message says which items were put and which were not.
`,
		RunE: subcommandRequired,
	}
	fs := cmd.PersistentFlags()
	fs.IntVar(&o.priority, "priority", 0, "put: item `priority`, 0 (first) to 999")
	fs.IntVarP(&o.count, "n", "n", 1, "take: take `n` items, one per line")
	fs.BoolVar(&o.noWait, "no-wait", false, "take: exit 1 at once if the queue is empty")
	fs.DurationVar(&o.timeout, "timeout", 0, "take: give up (exit 1) after this `duration`; 0 waits for ever")
	fs.BoolVar(&o.work, "work", false, "use the work-queue layout: take is at-least-once (see above)")
	fs.BoolVar(&o.asJSON, "json", false, "take: print each item as a JSON object on a line of its own; len: print a JSON object")
	addSubcommands(cmd, nil, func(cmd *cobra.Command, args []string) error { return runQueue(a, cmd, args, &o) },
		subcommand{"put PATH ITEM...", "append items"},
		subcommand{"take PATH", "take items from the head and print them"},
		subcommand{"len PATH", "print the number of items"})
	return cmd
}

func runQueue(a *app, cmd *cobra.Command, pos []string, o *queueOptions) error {
	sub := cmd.Name()
	if len(pos) == 0 {
		return cli.Usagef("queue %s: missing PATH", sub)
	}
	// Without --priority, items go into the plain FIFO queue, which Curator's
	// DistributedQueue can read too.
	withPriority := cmd.Flags().Changed("priority")
	path, items := pos[0], pos[1:]
	if err := zkcoord.ValidatePath(path); err != nil {
		return cli.Usagef("queue: %v", err)
	}
	switch {
	case sub == "put" && len(items) == 0:
		return cli.Usagef("queue put: missing ITEM (or - for standard input)")
	case sub != "put" && len(items) > 0:
		return cli.Usagef("queue %s: unexpected argument %q", sub, items[0])
	case o.priority < 0 || o.priority > queue.MaxPriority:
		return cli.Usagef("queue: --priority must be in [0, 999]")
	case o.count < 1:
		return cli.Usagef("queue take: -n must be at least 1")
	}
	if len(items) == 1 && items[0] == "-" {
		items = nil
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			items = append(items, sc.Text())
		}
		if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("queue put %s: line %d of standard input is %d bytes or more: larger than ZooKeeper lets a node hold; nothing was put",
				path, len(items)+1, maxInput)
		} else if err != nil {
			return fmt.Errorf("queue put %s: reading standard input: %w; nothing was put", path, err)
		}
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()

	if o.work {
		return workQueue(a, sess, ctx, sub, path, items, o.priority, withPriority, o.count, o.noWait, o.timeout, o.asJSON)
	}
	// A PriorityQueue serves a plain Queue's items as priority 0, so it
	// can take from both kinds.
	pq, err := queue.NewPriority(sess, path)
	if err != nil {
		return cli.Usagef("queue: %v", err)
	}
	q, err := queue.New(sess, path)
	if err != nil {
		return cli.Usagef("queue: %v", err)
	}
	switch sub {
	case "put":
		for i, it := range items {
			if withPriority {
				_, err = pq.Put(ctx, o.priority, []byte(it))
			} else {
				_, err = q.Put(ctx, []byte(it))
			}
			if err != nil {
				return fmt.Errorf("queue put %s: %s", path, partialPut(i, len(items), err))
			}
		}
	case "len":
		n, err := pq.Len(ctx)
		if err != nil {
			return fmt.Errorf("queue len %s: %w", path, err)
		}
		printLen(a, path, n, o.asJSON)
	case "take":
		tctx, tcancel := takeContext(a, o.timeout)
		defer tcancel()
		// Items are taken in batches (one transaction each), as many as
		// are still wanted.
		for left := o.count; left > 0; {
			var got [][]byte
			if o.noWait {
				got, err = pq.TryTakeN(ctx, min(left, queue.MaxBatch))
			} else {
				got, err = pq.TakeN(tctx, min(left, queue.MaxBatch))
			}
			if err != nil {
				return takeError(a, path, o.timeout, err, o.count-left)
			}
			for _, data := range got {
				a.printf("%s\n", itemLine(data, o.asJSON))
			}
			left -= len(got)
		}
	}
	return nil
}

// takeContext bounds a take that waits by --timeout.
func takeContext(a *app, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(a.Ctx, timeout)
	}
	return context.WithCancel(a.Ctx)
}

// takeError says why a take ended before it had all the items it was
// asked for, and how many it took (and printed) before that.
func takeError(a *app, path string, timeout time.Duration, err error, taken int) error {
	done := ""
	if taken > 0 {
		done = fmt.Sprintf(" after taking %s (printed above)", plural(taken, "item"))
	}
	switch {
	case errors.Is(err, queue.ErrEmpty):
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("queue %s is empty%s", path, done)}
	case a.Ctx.Err() != nil:
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("interrupted%s", done)}
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no item in %s within %v%s", path, timeout, done)
	}
	return fmt.Errorf("queue take %s%s: %w", path, done, err)
}

// workQueue runs put, take or len on a work queue. Its take claims a batch,
// prints it, then acknowledges it: at least once.
func workQueue(a *app, sess *zkcoord.Session, ctx context.Context, sub, path string, items []string,
	prio int, withPriority bool, count int, noWait bool, timeout time.Duration, asJSON bool) error {
	wq, err := queue.NewWork(sess, path)
	if err != nil {
		return cli.Usagef("queue: %v", err)
	}
	if !withPriority {
		prio = queue.DefaultWorkPriority
	}
	switch sub {
	case "put":
		for i, it := range items {
			if err := wq.Put(ctx, []byte(it), prio); err != nil {
				return fmt.Errorf("queue put %s: %s", path, partialPut(i, len(items), err))
			}
		}
	case "len":
		n, err := wq.Len(ctx)
		if err != nil {
			return fmt.Errorf("queue len %s: %w", path, err)
		}
		printLen(a, path, n, asJSON)
	case "take":
		tctx, tcancel := takeContext(a, timeout)
		defer tcancel()
		for left := count; left > 0; {
			var cs []*queue.Claim
			if noWait {
				cs, err = wq.TryTakeN(ctx, min(left, queue.MaxBatch))
			} else {
				cs, err = wq.TakeN(tctx, min(left, queue.MaxBatch))
			}
			if err != nil {
				return takeError(a, path, timeout, err, count-left)
			}
			if err := printAndAck(a, sess, path, cs, asJSON); err != nil {
				return err
			}
			left -= len(cs)
		}
	}
	return nil
}

// printAndAck prints the items of cs, then acknowledges them (pipelined,
// about one round trip for the batch). Items that could not be printed are
// given back; an item printed and not acknowledged is taken again.
func printAndAck(a *app, sess *zkcoord.Session, path string, cs []*queue.Claim, asJSON bool) error {
	ctx, cancel := a.opContext(sess)
	defer cancel()
	var werr error
	for i, c := range cs {
		if _, werr = fmt.Fprintf(a.Stdout, "%s\n", itemLine(c.Data(), asJSON)); werr != nil {
			for _, c := range cs[i:] {
				_ = c.Release(ctx)
			}
			cs = cs[:i]
			werr = fmt.Errorf("writing the items: %w", werr)
			break
		}
	}
	if err := ackAll(ctx, cs); err != nil {
		werr = errors.Join(werr, fmt.Errorf("%w (the items will be taken again)", err))
	}
	if werr != nil {
		return fmt.Errorf("queue take %s: %w", path, werr)
	}
	return nil
}

// ackAll acknowledges every claim of cs, concurrently.
func ackAll(ctx context.Context, cs []*queue.Claim) error {
	errs := make([]error, len(cs))
	fanout.Each(len(cs), len(cs), func(i int) { errs[i] = cs[i].Ack(ctx) })
	return errors.Join(errs...)
}

// partialPut says what a put of n items did when item i (from 0) failed
// with err: the items before it were put; it was not, or, when its reply
// was lost (zkcoord.ErrOutcomeUnknown), may have been; those after it were
// not.
func partialPut(i, n int, err error) string {
	failed := "was not put"
	if errors.Is(err, zkcoord.ErrOutcomeUnknown) {
		failed = "may or may not have been put"
	}
	if n == 1 {
		return fmt.Sprintf("%v; the item %s", err, failed)
	}
	done := "no item before it was put"
	if i > 0 {
		done = fmt.Sprintf("items 1 to %d of %d were put", i, n)
	}
	rest := ""
	switch {
	case i+2 == n:
		rest = fmt.Sprintf(", item %d was not put", n)
	case i+2 < n:
		rest = fmt.Sprintf(", items %d to %d were not put", i+2, n)
	}
	return fmt.Sprintf("item %d: %v; %s, item %d %s%s", i+1, err, done, i+1, failed, rest)
}

// itemLine is how take prints an item: as it is, or with --json as an
// object with its data and the data's encoding.
func itemLine(data []byte, asJSON bool) []byte {
	if !asJSON {
		return data
	}
	text, enc := jsonData(data)
	b, _ := json.Marshal(struct {
		Data     string `json:"data"`
		Encoding string `json:"encoding"`
	}{text, enc})
	return b
}

// printLen prints the length of the queue at path, with --json as an
// object.
func printLen(a *app, path string, n int, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(struct {
			Path string `json:"path"`
			Len  int    `json:"len"`
		}{path, n})
		a.printf("%s\n", b)
		return
	}
	a.printf("%d\n", n)
}
