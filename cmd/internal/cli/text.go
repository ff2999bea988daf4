package cli

import "strings"

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
