//go:build !zkcoord_broken_claim

package chaos

// claimBugBuilt tells whether the queue package was built with its broken
// claim compiled in (the zkcoord_broken_claim tag), which BugClaimCallerCtx
// needs.
const claimBugBuilt = false
