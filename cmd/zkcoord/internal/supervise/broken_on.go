//go:build zkcoord_broken

package supervise

import "os"

// brokenEnv names a variable that, in a build with the zkcoord_broken tag
// only (broken_on.go), restores a known broken behaviour so that the chaos
// harness can show it catches it: "grace" makes a stop wait out the whole
// grace whatever happens meanwhile (and cuts it after a loss by a constant
// fraction of the session timeout), "pdeathsig" starts the command directly
// with only the kernel's parent-death signal, which reaches the child but
// not its children, "group" makes the shim signal, kill and reap the
// command's process group alone, so that a process that left it (setsid, a
// double fork) outlives the command; "mixed-kinds" is read by the lock
// package, whose locks then ignore contenders of another kind. A build
// without the tag (every shipped one) never reads it.
const brokenEnv = "ZKCOORD_TEST_BROKEN"

// brokenMode, in this build only, is the broken behaviour brokenEnv asks for.
func brokenMode() string { return os.Getenv(brokenEnv) }
