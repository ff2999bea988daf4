//go:build !zkcoord_broken

package lock

// brokenMixedKinds is false except in a build with the zkcoord_broken tag
// (broken_on.go), which the chaos harness uses to show that it catches a
// known broken behaviour. No shipped build can turn it on.
func brokenMixedKinds() bool { return false }
