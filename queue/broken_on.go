//go:build zkcoord_broken_claim

package queue

import "os"

// brokenClaim, in this build only, restores the claim sent with the
// caller's context and left unsettled when that context ends in flight,
// for the processes whose ZKCOORD_TEST_BROKEN is "claim-caller-ctx".
func brokenClaim() bool { return os.Getenv("ZKCOORD_TEST_BROKEN") == "claim-caller-ctx" }
