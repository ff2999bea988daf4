package main

import "golang.org/x/sys/unix"

// adoptOrphans makes the calling process (the shim) a child subreaper: the
// orphans of the command's tree become its children instead of init's, so
// that it can reap them and exit only once they are gone.
func adoptOrphans() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
