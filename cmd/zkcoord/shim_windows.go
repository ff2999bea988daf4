package main

// runShimIfAsked does nothing on Windows: a job object, not a shim, ties a
// child's processes to zkcoord.
func runShimIfAsked() {}
