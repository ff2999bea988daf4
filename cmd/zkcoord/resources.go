package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/rebalance"
)

// resourcesOptions are the flags of resources.
type resourcesOptions struct {
	root   string
	asJSON bool
}

func newResourcesCommand(a *app) *cobra.Command {
	var o resourcesOptions
	cmd := &cobra.Command{
		Use:         "resources add|rm|ls GROUP [RESOURCE...] [--root PATH]",
		Short:       "register, unregister or list a group's resources",
		Annotations: brief("add|rm|ls GROUP"),
		Long: `
  resources add GROUP RESOURCE...   register resources; the group rebalances
  resources rm GROUP RESOURCE...    unregister resources; their owners stop them
  resources ls GROUP                list the registered resources, one per line

A resource id is one ZooKeeper node name (no "/"). Removing a resource never
interrupts its current owner abruptly: the owner stops it after the next
rebalancing, as it would for a move. Adding a resource that exists, or removing
one that does not, is reported and makes the exit status 1, but the other
resources given are still processed. Any other failure stops the command,
which then says which resources it added (or removed) and which it did not
try.
`,
		RunE: subcommandRequired,
	}
	fs := cmd.PersistentFlags()
	fs.StringVar(&o.root, "root", rebalance.DefaultRoot, "`path` under which groups live")
	fs.BoolVar(&o.asJSON, "json", false, "ls: print a JSON array")
	addSubcommands(cmd, nil, func(cmd *cobra.Command, args []string) error { return runResources(a, cmd, args, &o) },
		subcommand{"add GROUP RESOURCE...", "register resources; the group rebalances"},
		subcommand{"rm GROUP RESOURCE...", "unregister resources; their owners stop them (also: remove)"},
		subcommand{"ls GROUP", "list the registered resources"})
	return cmd
}

func runResources(a *app, cmd *cobra.Command, pos []string, o *resourcesOptions) error {
	sub := cmd.Name()
	if len(pos) == 0 {
		return cli.Usagef("resources %s: missing GROUP", sub)
	}
	group, ids := pos[0], pos[1:]
	if err := checkGroup(cmd, group); err != nil {
		return err
	}
	switch {
	case sub == "ls" && len(ids) > 0:
		return cli.Usagef("resources ls: unexpected argument %q", ids[0])
	case sub != "ls" && len(ids) == 0:
		return cli.Usagef("resources %s: missing RESOURCE", sub)
	}
	for _, id := range ids {
		if err := zkcoord.ValidateName(id); err != nil {
			return cli.Usagef("resources %s: resource %q: %v", sub, id, err)
		}
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()

	if sub == "ls" {
		list, err := rebalance.ListResources(ctx, sess, zkcoord.Join(o.root, group))
		if err != nil {
			return fmt.Errorf("listing the resources of %s: %w", group, err)
		}
		if o.asJSON {
			if list == nil {
				list = []string{}
			}
			b, _ := json.Marshal(list)
			a.printf("%s\n", b)
			return nil
		}
		for _, r := range list {
			a.printf("%s\n", r)
		}
		return nil
	}
	var did, failed []string
	for i, id := range ids {
		var err error
		if sub == "add" {
			err = rebalance.AddResource(ctx, sess, zkcoord.Join(o.root, group), id)
		} else {
			err = rebalance.RemoveResource(ctx, sess, zkcoord.Join(o.root, group), id)
		}
		switch {
		case err == nil:
			did = append(did, id)
			a.Log.Debug("done", "op", sub, "group", group, "resource", id)
		case errors.Is(err, rebalance.ErrResourceExists):
			failed = append(failed, id+": already registered")
		case errors.Is(err, rebalance.ErrNoResource):
			failed = append(failed, id+": no such resource")
		case errors.Is(err, rebalance.ErrInvalidOption) && i == 0:
			return cli.Usagef("resources %s: %v", sub, err)
		default:
			before := ""
			if len(failed) > 0 {
				before = strings.Join(failed, "; ") + "; "
			}
			return fmt.Errorf("resources %s %s: %s%s: %w%s", sub, group, before, id, err, resourcesDone(sub, did, ids[i+1:]))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("resources %s %s: %s%s", sub, group, strings.Join(failed, "; "), resourcesDone(sub, did, nil))
	}
	return nil
}

// resourcesDone says, after a failure, which resources resources add or
// rm did (done) and which it did not try (left).
func resourcesDone(sub string, done, left []string) string {
	verb := map[string]string{"add": "added", "rm": "removed"}[sub]
	var s string
	if len(done) > 0 {
		s = "; " + verb + " " + strings.Join(done, ", ")
	} else {
		s = "; none " + verb
	}
	if len(left) > 0 {
		s += "; not tried: " + strings.Join(left, ", ")
	}
	return s
}
