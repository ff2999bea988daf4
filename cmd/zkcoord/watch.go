package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cache"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// watchOptions are the flags of watch.
type watchOptions struct {
	tree   bool
	depth  int
	asJSON bool
}

func newWatchCommand(a *app) *cobra.Command {
	var o watchOptions
	cmd := &cobra.Command{
		Use:         "watch PATH [--tree] [--depth N] [--json]",
		Short:       "print the changes of a node or a subtree as they happen",
		Annotations: brief("PATH"),
		Long: `
Print a line for every change of the node at PATH (with --tree, of the
subtree under it, down to --depth levels) until interrupted: first an Added
line for every node that exists and Initialized, then Added, Updated and
Removed as nodes change. PATH need not exist yet. With --json, each line is
a JSON object ({"type": "Added", "path": ..., "data": ..., "version": ...,
"mzxid": ...}; {"type": "StateChanged", "state": ...}).

It rides out a ZooKeeper incident. When the connection is lost it prints
StateChanged Suspended; once connected again, StateChanged Reconnected, the
changes made meanwhile (Added, Updated, Removed: each node that differs,
once) and Resynced. If the session ends meanwhile (StateChanged Lost or
Expired), it waits for ZooKeeper, watches with a new session and prints
StateChanged Connected, the differences from what it printed before, and
Resynced. Exits 0 when interrupted, 1 if ZooKeeper cannot be reached
within --connect-timeout at the start or refuses the credentials.

Example:
  zkcoord watch /config --tree --depth 2
`,
		Args: pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("depth") && !o.tree {
				return cli.Usagef("watch: --depth needs --tree")
			}
			return runWatch(a, args[0], &o)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.tree, "tree", false, "watch the subtree under PATH, not PATH alone")
	fs.IntVar(&o.depth, "depth", -1, "with --tree, watch `n` levels below PATH (default: no limit)")
	fs.BoolVar(&o.asJSON, "json", false, "print each event as a JSON object")
	return cmd
}

// watchEvent is the --json form of a cache event.
type watchEvent struct {
	Type    string `json:"type"`
	Path    string `json:"path,omitempty"`
	Data    string `json:"data,omitempty"`
	Version *int32 `json:"version,omitempty"`
	Mzxid   int64  `json:"mzxid,omitempty"`
	State   string `json:"state,omitempty"`
	Err     string `json:"error,omitempty"`
}

func runWatch(a *app, path string, o *watchOptions) error {
	if err := a.Setup(); err != nil {
		return err
	}
	w := &watcher{a: a, path: path, o: o, printed: map[string]cache.Node{}}
	err := a.supervise(a.Ctx, w.watch)
	if a.Ctx.Err() != nil {
		return nil
	}
	return err
}

// watcher prints the changes of PATH, Session after Session. It remembers
// the nodes as it last printed them, so that with a new Session it prints
// only what differs.
type watcher struct {
	a       *app
	path    string
	o       *watchOptions
	printed map[string]cache.Node // path → the node as last printed
	started bool                  // a Session was watched before this one
}

// watch follows PATH on one Session until interrupted or the Session ends.
// On a new Session after a loss, it takes the cache's first load for a
// resync: it prints StateChanged Connected, the differences with what it
// printed before, then Resynced.
func (w *watcher) watch(_ context.Context, sess *zkcoord.Session) error {
	var c *cache.Cache
	var err error
	if w.o.tree {
		c, err = cache.NewTree(sess, w.path, cache.WithMaxDepth(w.o.depth))
	} else {
		c, err = cache.NewNode(sess, w.path)
	}
	if err != nil {
		return cli.Usagef("watch: %v", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
		defer cancel()
		_ = c.Close(ctx)
	}()
	resyncing := w.started
	w.started = true
	if resyncing {
		w.print(cache.Event{Type: cache.StateChanged, State: zkcoord.Connected})
	}
	var loaded []cache.Node // the new Session's first load, while resyncing
	for {
		select {
		case <-w.a.Ctx.Done():
			return nil
		case ev, ok := <-c.Events():
			switch {
			case !ok:
				// After the Session's terminal state: Lost or Expired
				// brings a new Session.
				if err := sess.Err(); err != nil {
					return fmt.Errorf("watching %s: %w", w.path, err)
				}
				<-c.Done()
				return fmt.Errorf("watching %s: the cache stopped: %v", w.path, c.Err())
			case resyncing && ev.Type == cache.Added:
				loaded = append(loaded, ev.Node)
			case resyncing && ev.Type == cache.Initialized:
				w.differences(loaded)
				w.print(cache.Event{Type: cache.Resynced})
				resyncing = false
			default:
				w.print(ev)
			}
		}
	}
}

// differences prints how the nodes loaded on a new Session differ from
// those printed before, as the cache reports a resync: Removed for the
// nodes gone (descendants before their parents) or deleted and created
// again, then, in the order loaded, Added for the new ones and Updated
// for those whose data changed.
func (w *watcher) differences(loaded []cache.Node) {
	now := make(map[string]cache.Node, len(loaded))
	for _, n := range loaded {
		now[n.Path] = n
	}
	var gone []string
	for p, old := range w.printed {
		if n, ok := now[p]; !ok || n.Stat.Czxid != old.Stat.Czxid {
			gone = append(gone, p)
		}
	}
	// A path sorts before every path below it.
	slices.Sort(gone)
	slices.Reverse(gone)
	for _, p := range gone {
		w.print(cache.Event{Type: cache.Removed, Node: w.printed[p]})
	}
	for _, n := range loaded {
		switch old, ok := w.printed[n.Path]; {
		case !ok:
			w.print(cache.Event{Type: cache.Added, Node: n})
		case n.Stat.Mzxid != old.Stat.Mzxid:
			w.print(cache.Event{Type: cache.Updated, Node: n})
		}
	}
}

// print prints ev and remembers the node it reports.
func (w *watcher) print(ev cache.Event) {
	switch ev.Type {
	case cache.Added, cache.Updated:
		w.printed[ev.Node.Path] = ev.Node
	case cache.Removed:
		delete(w.printed, ev.Node.Path)
	}
	if w.o.asJSON {
		b, _ := json.Marshal(toWatchEvent(ev))
		w.a.printf("%s\n", b)
		return
	}
	w.a.printf("%s\n", formatEvent(ev))
}

func toWatchEvent(ev cache.Event) watchEvent {
	w := watchEvent{Type: ev.Type.String()}
	switch ev.Type {
	case cache.Added, cache.Updated, cache.Removed, cache.Failed:
		w.Path, w.Data = ev.Node.Path, string(ev.Node.Data)
		if ev.Type != cache.Failed {
			v := ev.Node.Stat.Version
			w.Version, w.Mzxid = &v, ev.Node.Stat.Mzxid
		}
	case cache.StateChanged:
		w.State = ev.State.String()
	}
	if ev.Err != nil {
		w.Err = ev.Err.Error()
	}
	return w
}

// formatEvent is the text form of an event: its type, then what it is about.
func formatEvent(ev cache.Event) string {
	switch ev.Type {
	case cache.Added, cache.Updated, cache.Removed:
		return fmt.Sprintf("%s %s version %d data %s", ev.Type, ev.Node.Path, ev.Node.Stat.Version,
			strconv.Quote(string(ev.Node.Data)))
	case cache.StateChanged:
		if note := stateNote(ev); note != "" {
			return ev.String() + ": " + note
		}
	}
	return ev.String()
}

// stateNote says what a state change means for the lines that follow.
func stateNote(ev cache.Event) string {
	switch ev.State {
	case zkcoord.Suspended:
		return "disconnected from ZooKeeper; changes made meanwhile follow once connected again"
	case zkcoord.Reconnected:
		return "connected again; the changes missed follow, then Resynced"
	case zkcoord.Connected:
		return "connected with a new session; the changes missed follow, then Resynced"
	case zkcoord.Lost, zkcoord.Expired:
		return fmt.Sprintf("the session ended (%v); watching again with a new session once ZooKeeper answers", ev.Err)
	}
	if ev.Err != nil {
		return ev.Err.Error()
	}
	return ""
}
