package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// aclOptions are the flags of acl.
type aclOptions struct {
	asJSON  bool
	version int32
}

func newACLCommand(a *app) *cobra.Command {
	var o aclOptions
	cmd := &cobra.Command{
		Use:         "acl get|set PATH [ACL...]",
		Short:       "read or replace a node's ACL",
		Annotations: brief("get|set PATH [ACL...]"),
		Long: `
  acl get PATH          print the node's ACL, one entry a line
  acl set PATH ACL...   replace the node's ACL with these entries

An entry is written as zkCli.sh writes it, scheme:id:permissions, the
permissions as letters of cdrwa (create, delete, read, write, admin):

  world:anyone:r              everyone may read
  auth::cdrwa                 the users the session is authenticated as (--auth)
  digest:alice:HASH:cdrwa     alice, HASH being base64(sha1("alice:password"))
  ip:10.0.0.0/8:r             clients from these addresses

Give each entry as its own argument (zkCli.sh's comma-separated list too:
split it). acl get prints entries in this form, so its output can be given to
acl set; but ZooKeeper shows a digest's hash as x to a client that may not
administer the node (no a in the entries that match it). With --version N, acl set replaces the ACL only if its ACL version
(aclVersion in 'zkcoord stat') is N. An entry that does not parse is a usage
error (exit 2) and nothing is changed; one the server refuses exits 1.

This is not the --acl flag, which says which ACL the nodes zkcoord creates
get.

Examples:
  zkcoord acl get /config
  zkcoord acl set /config world:anyone:r auth::cdrwa --auth admin:secret
`,
		RunE: subcommandRequired,
	}
	fs := cmd.PersistentFlags()
	fs.BoolVar(&o.asJSON, "json", false, "get: print a JSON object: path, entries and the ACL version")
	fs.Int32Var(&o.version, "version", anyVersion, "set: replace the ACL only if its ACL version is `n`")
	cmd.AddCommand(&cobra.Command{
		Use:   "get PATH",
		Short: "print the node's ACL",
		Args:  pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("version") {
				return cli.Usagef("acl get: --version is for acl set")
			}
			return runACLGet(a, args[0], o.asJSON)
		},
	}, &cobra.Command{
		Use:   "set PATH ACL...",
		Short: "replace the node's ACL",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return wantArgs(cmd, args, "PATH", "ACL")
			}
			return checkPath(cmd, args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("json") {
				return cli.Usagef("acl set: --json is for acl get")
			}
			if err := checkVersion(cmd, o.version); err != nil {
				return err
			}
			var acl []zkcoord.ACL
			for _, s := range args[1:] {
				entry, err := parseACL(s)
				if err != nil {
					if strings.Contains(s, ",") {
						return cli.Usagef("acl set: %v; give each entry as its own argument", err)
					}
					return cli.Usagef("acl set: %v", err)
				}
				acl = append(acl, entry)
			}
			return runACLSet(a, args[0], acl, o.version)
		},
	})
	return cmd
}

// aclJSON is the --json form of a node's ACL.
type aclJSON struct {
	Path     string         `json:"path"`
	ACL      []aclEntryJSON `json:"acl"`
	Aversion int32          `json:"aversion"`
}

type aclEntryJSON struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}

func runACLGet(a *app, path string, asJSON bool) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	acl, st, err := sess.GetACL(ctx, path)
	if err != nil {
		return nodeError("acl get", path, err)
	}
	if asJSON {
		out := aclJSON{Path: path, ACL: []aclEntryJSON{}, Aversion: st.Aversion}
		for _, e := range acl {
			out.ACL = append(out.ACL, aclEntryJSON{Scheme: e.Scheme, ID: e.ID, Perms: formatPerms(e.Perms)})
		}
		return a.printJSON(out)
	}
	term := isTerminal(a.Stdout)
	for _, e := range acl {
		a.printf("%s\n", shownName(formatACL(e), term))
	}
	return nil
}

func runACLSet(a *app, path string, acl []zkcoord.ACL, version int32) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	_, err = sess.SetACL(ctx, path, acl, version)
	switch {
	case errors.Is(err, zkcoord.ErrBadVersion):
		return versionError("acl set", path, "ACL version", version, func() (int32, error) {
			_, st, err := sess.GetACL(ctx, path)
			if err != nil {
				return 0, err
			}
			return st.Aversion, nil
		})
	case errors.Is(err, zkcoord.ErrInvalidACL):
		return fmt.Errorf("acl set %s: the server refused the ACL (an auth entry needs --auth; a scheme it does not know is refused): %w", path, err)
	}
	return nodeError("acl set", path, err)
}
