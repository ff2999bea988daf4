package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
)

// setOptions are the flags of set.
type setOptions struct {
	version int32
	asJSON  bool
}

func newSetCommand(a *app) *cobra.Command {
	var o setOptions
	cmd := &cobra.Command{
		Use:         "set PATH DATA|- [--version N] [--json]",
		Short:       "write a node's data",
		Annotations: brief("PATH DATA|-"),
		Long: `
Write DATA to the node at PATH, which must exist ('zkcoord create' makes one).
With "-" as DATA, the data is all of standard input, as it is (binary too; a
trailing newline stays part of it). Data that starts with "-" goes after "--":
zkcoord set /x -- -5.

With --version N, the write happens only if the node's data version is N
(see 'zkcoord stat'), so a read-modify-write does not overwrite a change made
meanwhile; otherwise it exits 1 and says which version the node is at. By
default any version is overwritten. Prints nothing, or with --json the
node's new stat. A missing node exits 1 ("no node PATH").

Examples:
  zkcoord set /config/app 'mode=fast'
  zkcoord set /config/logo.png - < logo.png
  zkcoord set /config/app 'mode=safe' --version 3
`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := wantArgs(cmd, args, "PATH", "DATA"); err != nil {
				return err
			}
			return checkPath(cmd, args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkVersion(cmd, o.version); err != nil {
				return err
			}
			return runSetData(a, args[0], args[1], &o)
		},
	}
	fs := cmd.Flags()
	fs.Int32Var(&o.version, "version", anyVersion, "write only if the node's data version is `n`")
	fs.BoolVar(&o.asJSON, "json", false, "print the node's new stat as a JSON object")
	return cmd
}

func runSetData(a *app, path, arg string, o *setOptions) error {
	data, err := dataArg(arg, os.Stdin)
	if err != nil {
		return err
	}
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	st, err := sess.Set(ctx, path, data, o.version)
	if errors.Is(err, zkcoord.ErrBadVersion) {
		return versionError("set", path, "data version", o.version, func() (int32, error) {
			ok, st, err := sess.Exists(ctx, path)
			if err != nil || !ok {
				return 0, zkcoord.ErrNoNode
			}
			return st.Version, nil
		})
	}
	if err != nil {
		return nodeError("set", path, err)
	}
	if o.asJSON {
		return a.printJSON(pathStatJSON{Path: path, statJSON: toStatJSON(st)})
	}
	return nil
}
