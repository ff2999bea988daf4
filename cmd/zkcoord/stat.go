package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord"
)

func newStatCommand(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:         "stat PATH [--json]",
		Short:       "print a node's metadata",
		Annotations: brief("PATH"),
		Long: `
Print the metadata (stat) of the node at PATH, one field a line, named as
zkCli.sh names them: the zxids of its creation, last data change and last
change of its children; its creation and modification times; the versions of
its data, children and ACL; the session that owns it, if it is ephemeral
(0x0 otherwise); the length of its data and its number of children.

With --json, an object with the path and the same fields: czxid, mzxid,
pzxid (numbers), ctime, mtime (RFC 3339), version, cversion, aversion,
ephemeral_owner (hex), data_length, num_children. A missing node exits 1
("no node PATH"). 'zkcoord status' is another command: a rebalancing
group's state.

Example:
  zkcoord stat /config/app
`,
		Args: pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStat(a, args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}

// pathStatJSON is the --json form of stat: the path and the stat's fields.
type pathStatJSON struct {
	Path string `json:"path"`
	*statJSON
}

func runStat(a *app, path string, asJSON bool) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	st, err := stat(ctx, sess, path)
	if err != nil {
		return nodeError("stat", path, err)
	}
	if asJSON {
		return a.printJSON(pathStatJSON{Path: path, statJSON: toStatJSON(st)})
	}
	printStat(a, st)
	return nil
}

// printStat prints st as zkCli.sh does, one "name = value" line a field,
// with times in RFC 3339 and local time.
func printStat(a *app, st *zkcoord.Stat) {
	when := func(ms int64) string { return time.UnixMilli(ms).Format("2006-01-02T15:04:05.000Z07:00") }
	for _, f := range []struct {
		name  string
		value any
	}{
		{"cZxid", fmt.Sprintf("0x%x", st.Czxid)},
		{"ctime", when(st.Ctime)},
		{"mZxid", fmt.Sprintf("0x%x", st.Mzxid)},
		{"mtime", when(st.Mtime)},
		{"pZxid", fmt.Sprintf("0x%x", st.Pzxid)},
		{"cversion", st.Cversion},
		{"dataVersion", st.Version},
		{"aclVersion", st.Aversion},
		{"ephemeralOwner", sessionID(st.EphemeralOwner)},
		{"dataLength", st.DataLength},
		{"numChildren", st.NumChildren},
	} {
		a.printf("%s = %v\n", f.name, f.value)
	}
}
