package cli

import (
	"io"
	"strings"
	"text/tabwriter"
)

// Dash returns s, or "-" for an empty s: how the zkcoord programs print a
// value that is not there.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Words returns the words of list separated by spaces, or "-" for none.
func Words(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return strings.Join(list, " ")
}

// Table returns a writer that lines up tab-separated columns as every
// listing of the zkcoord programs does, two spaces apart. Flush it once the
// rows are written.
func Table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }
