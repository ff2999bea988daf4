package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
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
Removed as nodes change, and StateChanged when the connection to ZooKeeper is
suspended, restored or lost (after a restored connection, Resynced ends the
differences found). PATH need not exist yet. With --json, each line is a JSON
object. Exits with status 1 when the session ends.

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
	sess, err := a.open()
	if err != nil {
		return err
	}
	defer cli.CloseSession(sess)
	var c *cache.Cache
	if o.tree {
		c, err = cache.NewTree(sess, path, cache.WithMaxDepth(o.depth))
	} else {
		c, err = cache.NewNode(sess, path)
	}
	if err != nil {
		return cli.Usagef("watch: %v", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), sess.Timeout())
		defer cancel()
		_ = c.Close(ctx)
	}()
	for {
		select {
		case <-a.ctx.Done():
			return nil
		case ev, ok := <-c.Events():
			if !ok {
				if a.ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("watching %s: %v", path, c.Err())
			}
			if o.asJSON {
				b, _ := json.Marshal(toWatchEvent(ev))
				a.printf("%s\n", b)
			} else {
				a.printf("%s\n", formatEvent(ev))
			}
		}
	}
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
	}
	return ev.String()
}
