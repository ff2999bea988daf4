//go:build zkcoord_broken

package lock

import "os"

// brokenMixedKinds, in this build only, restores the lock that ignores
// contenders of another kind on its path (a Mutex beside an RWMutex or a
// Semaphore, each holding at once), for the processes whose
// ZKCOORD_TEST_BROKEN is "mixed-kinds".
func brokenMixedKinds() bool { return os.Getenv("ZKCOORD_TEST_BROKEN") == "mixed-kinds" }
