package main

import (
	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
)

// getOptions are the flags of get.
type getOptions struct {
	raw    bool
	asJSON bool
}

func newGetCommand(a *app) *cobra.Command {
	var o getOptions
	cmd := &cobra.Command{
		Use:         "get PATH [--raw] [--json]",
		Short:       "print a node's data",
		Annotations: brief("PATH"),
		Long: `
Print the data of the node at PATH. To a pipe or a file the bytes are written
as they are, with nothing added. On a terminal they are shown safely: text as
it is (with a newline at the end); text with control or invisible characters
(an escape sequence, a lone carriage return, a right-to-left override) with
those characters escaped as in Go ("\x1b", "\u202e", and "\\" for a
backslash); and data that is not UTF-8 as a hex dump. A note on standard error
says when the data was escaped or dumped. --raw writes the bytes as they are
even to a terminal.

With --json, an object with the path, the data (a string if it is UTF-8,
else base64, as "encoding" says: "utf-8" or "base64") and the node's stat.
A missing node exits 1 ("no node PATH").

Examples:
  zkcoord get /config/app
  zkcoord get /config/logo.png > logo.png
  zkcoord get /config/app --json | jq -r .data
`,
		Args: pathArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.raw && o.asJSON {
				return cli.Usagef("get: --raw and --json exclude each other")
			}
			return runGet(a, args[0], &o)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.raw, "raw", false, "write the data as it is, also to a terminal")
	fs.BoolVar(&o.asJSON, "json", false, "print a JSON object: path, data, encoding (utf-8 or base64), stat")
	return cmd
}

// nodeJSON is the --json form of a node read by get.
type nodeJSON struct {
	Path     string    `json:"path"`
	Data     string    `json:"data"`
	Encoding string    `json:"encoding"`
	Stat     *statJSON `json:"stat"`
}

func runGet(a *app, path string, o *getOptions) error {
	sess, ctx, done, err := a.oneShot()
	if err != nil {
		return err
	}
	defer done()
	data, st, err := sess.Get(ctx, path)
	if err != nil {
		return nodeError("get", path, err)
	}
	switch {
	case o.asJSON:
		text, enc := jsonData(data)
		return a.printJSON(nodeJSON{Path: path, Data: text, Encoding: enc, Stat: toStatJSON(st)})
	case o.raw || !isTerminal(a.Stdout):
		_, err := a.Stdout.Write(data)
		return err
	}
	showData(a.Stdout, a.Stderr, data)
	return nil
}
