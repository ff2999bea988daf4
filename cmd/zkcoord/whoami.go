package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

func newWhoAmICommand(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "whoami [--json]",
		Short: "print the identities the server knows this client by",
		Long: `
Print the identities ZooKeeper gives zkcoord's session, one a line: scheme and
user, such as "ip 127.0.0.1" and, with --auth alice:secret, "digest alice".
These are what ACL entries are checked against. With --json, a JSON array of
objects with the scheme and the user. Needs ZooKeeper 3.7 or later.

Example:
  zkcoord whoami --auth alice:secret
`,
		Args: exactly(),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWhoAmI(a, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

// identityJSON is the --json form of an identity.
type identityJSON struct {
	Scheme string `json:"scheme"`
	User   string `json:"user"`
}

func runWhoAmI(a *app, asJSON bool) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	ids, err := sess.WhoAmI(ctx)
	if errors.Is(err, zkcoord.ErrUnimplemented) {
		return fmt.Errorf("whoami: the server does not know the request (it needs ZooKeeper 3.7 or later): %w", err)
	}
	if err != nil {
		return err
	}
	if asJSON {
		out := []identityJSON{}
		for _, id := range ids {
			out = append(out, identityJSON{Scheme: id.Scheme, User: id.User})
		}
		return a.printJSON(out)
	}
	term := isTerminal(a.Stdout)
	tw := cli.Table(a.Stdout)
	for _, id := range ids {
		fmt.Fprintf(tw, "%s\t%s\n", shownName(id.Scheme, term), shownName(id.User, term))
	}
	return tw.Flush()
}
