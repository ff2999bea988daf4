//go:build !zkcoord_broken

package supervise

// brokenMode is "" except in a build with the zkcoord_broken tag
// (broken_on.go): no shipped build can turn a known broken behaviour on.
func brokenMode() string { return "" }
