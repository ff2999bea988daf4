package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/zkcoord/zkcoord/cache"
)

var watchCommand = &command{
	name:     "watch",
	synopsis: "PATH [--tree] [--depth N] [--json]",
	brief:    "PATH",
	summary:  "print the changes of a node or a subtree as they happen",
	help: `
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
	run: runWatch,
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

func runWatch(a *app, cmd *command, args []string) error {
	fs := a.flags(cmd, "")
	tree := fs.Bool("tree", false, "watch the subtree under PATH, not PATH alone")
	depth := fs.Int("depth", -1, "with --tree, watch `n` levels below PATH (default: no limit)")
	asJSON := fs.Bool("json", false, "print each event as a JSON object")
	path, _, err := fs.pathArg(args)
	if err != nil {
		return err
	}
	if fs.isSet("depth") && !*tree {
		return usagef("watch: --depth needs --tree")
	}
	sess, err := a.open()
	if err != nil {
		return err
	}
	defer closeSession(sess)
	var c *cache.Cache
	if *tree {
		c, err = cache.NewTree(sess, path, cache.WithMaxDepth(*depth))
	} else {
		c, err = cache.NewNode(sess, path)
	}
	if err != nil {
		return usagef("watch: %v", err)
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
			if *asJSON {
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
