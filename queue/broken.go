//go:build !zkcoord_broken_claim

package queue

// brokenClaim is false except in a build with the zkcoord_broken_claim tag
// (broken_on.go), which the chaos harness uses to show that it catches a
// known broken behaviour. No shipped build can turn it on.
func brokenClaim() bool { return false }
