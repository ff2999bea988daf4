//go:build zkcoord_broken_claim

package queue

import "os"

// brokenClaim, in this build only, restores the claim left unsettled when
// the caller's context ends while it is in flight (every time a take with
// a deadline claims something: see claimer.send), for the processes whose
// ZKCOORD_TEST_BROKEN is "claim-caller-ctx".
func brokenClaim() bool { return os.Getenv("ZKCOORD_TEST_BROKEN") == "claim-caller-ctx" }
