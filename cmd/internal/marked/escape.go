package marked

import (
	"fmt"
	"path/filepath"
)

// EscapeScript returns a shell script for tests of what outlives a
// command. It marks its processes with mark (exported into their
// environment) and starts, in the background, four processes that leave
// the command's process group, each writing its pid to a file in dir named
// after it (see [Escapees]): one in a session of its own (setsid), one
// double-forked (orphaned at once) into a process group of its own, one in
// a session of its own that ignores SIGTERM, and one in a session of its
// own that keeps starting processes in sessions of their own. Then the
// script runs until stopped; a stubborn one ignores SIGTERM too. It needs
// setsid and perl.
func EscapeScript(dir, mark string, stubborn bool) string {
	worker := func(name, pre, loop string) string {
		return fmt.Sprintf(`sh -c '%secho $$ > %s; while :; do %ssleep 0.1; done'`, pre, filepath.Join(dir, name), loop)
	}
	s := "export " + mark + "; "
	s += "setsid " + worker("setsid", "", "") + " & "
	s += "(perl -e 'setpgrp(0, 0); exec @ARGV' " + worker("fork", "", "") + " &); "
	s += "setsid " + worker("noterm", `trap "" TERM; `, "") + " & "
	s += "setsid " + worker("forker", "", "setsid sleep 1 & ") + " & "
	if stubborn {
		s += "trap '' TERM; "
	}
	return s + "while :; do sleep 0.1; done"
}

// Escapees are the names of the files in which EscapeScript's escaping
// processes write their pids.
var Escapees = []string{"setsid", "fork", "noterm", "forker"}
