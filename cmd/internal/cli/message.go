package cli

import (
	"slices"
	"strings"
)

// libraryPrefixes are the names the library's packages start their errors
// with ("lock: held by another client").
var libraryPrefixes = []string{"zkcoord", "lock", "election", "leader", "rebalance", "queue", "counter", "barrier",
	"discovery", "group", "config", "node", "cache", "failover", "console"}

// Message is the text of err as the programs print it, after their one
// "zkcoord: " prefix. A message wraps the library's errors in words of its
// own that already say what failed, so the package names the library
// starts its errors with are left out past the start (and "zkcoord"
// anywhere), and so is a part that only repeats
// what the one before it ends with: "acquiring the lock /x: lock: /x:
// lock: another kind..." reads "acquiring the lock /x: another kind...".
// What a context's end leaves ("context deadline exceeded") is said in
// words: "timed out", "interrupted".
func Message(err error) string {
	parts := strings.Split(err.Error(), ": ")
	var out []string
	for i, p := range parts {
		// At the start, a command's name ("lock: missing PATH") stays.
		if i < len(parts)-1 && (i > 0 || p == "zkcoord") && slices.Contains(libraryPrefixes, p) {
			continue
		}
		if n := len(out); n > 0 && (p == out[n-1] || strings.HasSuffix(out[n-1], " "+p)) {
			continue
		}
		out = append(out, p)
	}
	msg := strings.Join(out, ": ")
	msg = strings.ReplaceAll(msg, "context deadline exceeded", "timed out")
	msg = strings.ReplaceAll(msg, "context canceled", "interrupted")
	return msg
}
