package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/zkcoord/zkcoord/cmd/internal/cli"
	"github.com/zkcoord/zkcoord/cmd/zkcoord/internal/supervise"
)

func main() {
	supervise.RunShimIfAsked()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs one command line and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	a := &app{App: cli.NewApp(args, stdout, stderr)}
	return a.Run(func() *cobra.Command { return newRootCommand(a) })
}

// app is what every command shares (cli.App: output streams, the common
// flags and what they set up), with the ways of printing a command's
// output.
type app struct{ *cli.App }

// printf writes command output (not logs) on standard output.
func (a *app) printf(format string, args ...any) {
	fmt.Fprintf(a.Stdout, format, args...)
}

// printLine prints v as JSON on one line of standard output, for a
// long-running command whose reader waits for each line.
func (a *app) printLine(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are printed
	}
	a.printf("%s\n", b)
}

// printJSON prints v as indented JSON on standard output.
func (a *app) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	a.printf("%s\n", b)
	return nil
}
