//go:build zkcoord_broken_claim

package chaos

const claimBugBuilt = true
